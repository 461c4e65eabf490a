// Streams changesets as the reference hub shapes them (a ChangesetCollection or one Changeset), page by page from the storage: memory stays flat over any number of versions.
import { hubError } from '../../core/errors.js';
import type { ChangeKind, ChangeRow, HistoryStore, SpaceKey, StateKind, VersionRange, VersionRecord } from '../../storage/storage.js';

export const CHANGE_KINDS: readonly ChangeKind[] = ['inserted', 'updated', 'deleted'];

/** Rows and version records read per storage query. */
const PAGE = 1000;

/** Where a page of changesets continues: after `seq` in the part `kind` (an index of CHANGE_KINDS) of `version`. */
export interface ChangesetPosition {
  version: number;
  kind: number;
  seq: number;
}

export const pageTokenOf = (position: ChangesetPosition): string => `${position.version}_${position.kind}_${position.seq}`;

/** The position of a nextPageToken; a 400 for any other text. */
export function positionOf(token: string): ChangesetPosition {
  const match = /^(\d{1,15})_([0-2])_(\d{1,16})$/.exec(token);
  if (!match || !Number.isSafeInteger(Number(match[3]))) throw hubError('invalidPageToken', { token: token.slice(0, 40) });
  return { version: Number(match[1]), kind: Number(match[2]), seq: Number(match[3]) };
}

/** One kind of change over the versions of a read, a page at a time in (version, seq) order. */
export class ChangeCursor {
  private rows: ChangeRow[] = [];
  private index = 0;
  private exhausted = false;

  constructor(private readonly history: HistoryStore, private readonly space: SpaceKey, private readonly kind: StateKind,
    private after: { version: number; seq: number }, private readonly to: number) {}

  /** The next row of `version` without taking it; undefined when the kind has none left there. Rows of earlier versions are passed over. */
  async peek(version: number): Promise<ChangeRow | undefined> {
    for (;;) {
      for (; this.index < this.rows.length; this.index++) {
        const row = this.rows[this.index];
        if (row.version >= version) return row.version === version ? row : undefined;
      }
      if (this.exhausted) return undefined;
      this.rows = await this.history.changes(this.space, this.kind, this.after, this.to, PAGE);
      this.index = 0;
      this.exhausted = this.rows.length < PAGE;
      const last = this.rows[this.rows.length - 1];
      if (last) this.after = { version: last.version, seq: last.seq };
    }
  }

  take(): void {
    this.index++;
  }
}

/** The recorded versions of a range, a page at a time. */
export class VersionPages {
  private records: VersionRecord[] = [];
  private index = 0;
  private exhausted = false;

  constructor(private readonly history: HistoryStore, private readonly space: SpaceKey, private range: VersionRange) {}

  async peek(): Promise<VersionRecord | undefined> {
    if (this.index === this.records.length && !this.exhausted) {
      this.records = await this.history.versionsIn(this.space, this.range, PAGE);
      this.index = 0;
      this.exhausted = this.records.length < PAGE;
      const last = this.records[this.records.length - 1];
      if (last) this.range = { ...this.range, from: last.version + 1 };
    }
    return this.records[this.index];
  }

  take(): void {
    this.index++;
  }
}

/**
 * A page of changesets over the versions of `range` (its `from` is where the page starts), at most `limit` states in
 * all: a version whose states do not fit is continued on the next page, which the position says.
 */
export class ChangesetStream {
  private budget: number;
  private last?: ChangesetPosition;
  private next?: ChangesetPosition;
  private readonly cursors: ChangeCursor[];
  private readonly versions: VersionPages;

  constructor(history: HistoryStore, space: SpaceKey, range: VersionRange, limit: number, private readonly start?: ChangesetPosition) {
    this.budget = limit;
    this.versions = new VersionPages(history, space, range);
    // A page continuing a version has served its parts before the position's kind, and that kind up to its seq.
    this.cursors = CHANGE_KINDS.map((kind, index) => new ChangeCursor(history, space, kind, !start || index > start.kind ? { version: range.from, seq: 0 }
      : index === start.kind ? { version: start.version, seq: start.seq } : { version: start.version + 1, seq: 0 }, range.to));
  }

  /** Where the next page starts; undefined when this one holds the rest. Final once the text has been read. */
  get nextPageToken(): string | undefined {
    return this.next && pageTokenOf(this.next);
  }

  /** The first version record, or a 404 naming what was asked: the answer's first chunk fails, before its status line. */
  private async first(what: string): Promise<VersionRecord> {
    const record = await this.versions.peek();
    if (!record) throw hubError('changesetsNotFound', { what });
    return record;
  }

  /** `"version":…,"author":…,"createdAt":…,"inserted":{…},"updated":{…},"deleted":{…}` of one version. */
  private async *members(record: VersionRecord): AsyncIterable<string> {
    const { version } = record;
    const startKind = this.start?.version === version ? this.start.kind : 0;
    yield `"version":${version},"author":${JSON.stringify(record.author)},"createdAt":${record.createdAt}`;
    for (let kind = 0; kind < CHANGE_KINDS.length; kind++) {
      yield `,"${CHANGE_KINDS[kind]}":{"type":"FeatureCollection","features":[`;
      let separator = '';
      for (let row = kind < startKind || this.budget === 0 ? undefined : await this.cursors[kind].peek(version); row;
        row = this.budget === 0 ? undefined : await this.cursors[kind].peek(version)) {
        this.cursors[kind].take();
        yield separator + row.json;
        separator = ',';
        this.budget--;
        this.last = { version, kind, seq: row.seq };
      }
      yield ']}';
    }
    if (this.budget === 0 && this.last && (await this.hasMore(version))) this.next = this.last;
  }

  private async hasMore(version: number): Promise<boolean> {
    for (const cursor of this.cursors) if (await cursor.peek(version)) return true;
    return false;
  }

  /** One Changeset: the range's one version. */
  async *changeset(): AsyncIterable<string> {
    const record = await this.first('has this version');
    yield '{"type":"Changeset",';
    yield* this.members(record);
    yield `${this.next ? `,"nextPageToken":"${pageTokenOf(this.next)}"` : ''}}`;
  }

  /** A ChangesetCollection: `versions` by number, then the first and last version it holds and where the next page starts. */
  async *collection(what: string): AsyncIterable<string> {
    const first = await this.first(what);
    yield '{"type":"ChangesetCollection","versions":{';
    let lastVersion = first.version;
    for (let record = await this.versions.peek(); record && !this.next; record = await this.versions.peek()) {
      if (this.budget === 0) {
        this.next = { version: record.version, kind: 0, seq: 0 };
        break;
      }
      this.versions.take();
      yield `${record === first ? '' : ','}"${record.version}":{`;
      yield* this.members(record);
      yield '}';
      lastVersion = record.version;
    }
    yield `},"startVersion":${first.version},"endVersion":${lastVersion}${this.next ? `,"nextPageToken":"${pageTokenOf(this.next)}"` : ''}}`;
  }
}
