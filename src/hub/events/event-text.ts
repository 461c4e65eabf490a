// The texts of the event stream (docs/events.md): a version's changeset as an SSE event, built as its features are read, and the stream's other events.
import type { VersionRecord } from '../../storage/storage.js';
import { CHANGE_KINDS } from '../versions/changeset-stream.js';

/** Text is handed on once this much is gathered: a big version streams in pieces of this size. */
const PIECE = 64 * 1024;

/**
 * One version's event: `id: V` and one `data:` line holding a Changeset as GET /changesets/V answers it (stored
 * feature texts are JSON without line breaks). With a filter, a version none of whose features match is a small
 * `unmatched` event: it moves the client's Last-Event-ID, so a resume starts after it. (An event of `id:` alone would
 * move it in browsers, but clients built on eventsource-parser drop events without data, id and all.)
 */
export class ChangesetEvent {
  private parts: string[] = [];
  private size = 0;
  /** The section of CHANGE_KINDS open now; −1 before the first. */
  private kind = -1;
  private separator = '';

  constructor(private readonly record: VersionRecord) {}

  private push(text: string): void {
    this.parts.push(text);
    this.size += text.length;
  }

  private openUpTo(kind: number): void {
    if (this.kind === -1) {
      const { version, author, createdAt } = this.record;
      this.push(`id: ${version}\ndata: {"type":"Changeset","version":${version},"author":${JSON.stringify(author)},"createdAt":${createdAt}`);
    }
    for (; this.kind < kind; this.separator = '') {
      if (this.kind >= 0) this.push(']}');
      this.kind++;
      this.push(`,"${CHANGE_KINDS[this.kind]}":{"type":"FeatureCollection","features":[`);
    }
  }

  add(kind: number, json: string): void {
    this.openUpTo(kind);
    this.push(this.separator + json);
    this.separator = ',';
  }

  /** Text gathered so far once there is enough of it to send; '' until then. */
  piece(): string {
    return this.size >= PIECE ? this.take() : '';
  }

  /** The rest of the event. `always`: the whole event even when no feature was added. */
  finish(always: boolean): string {
    if (this.kind === -1 && !always) return `event: unmatched\nid: ${this.record.version}\ndata: {"type":"Unmatched","version":${this.record.version}}\n\n`;
    this.openUpTo(CHANGE_KINDS.length - 1);
    this.push(']}}\n\n');
    return this.take();
  }

  private take(): string {
    const text = this.parts.join('');
    this.parts = [];
    this.size = 0;
    return text;
  }
}

/**
 * The versions before `oldest` are no longer kept, so the stream cannot go on from where the client was: it goes on
 * after `version` (HEAD when this was sent), which the client re-reads the space at (`?version=`).
 */
export const resetEvent = (version: number, oldest: number): string =>
  `event: reset\nid: ${version}\ndata: {"type":"Reset","version":${version},"oldestKept":${oldest}}\n\n`;

/** The stream ends: why, and the last version sent, after which a new stream (Last-Event-ID, ?since=) resumes. */
export const disconnectEvent = (reason: string, resumeAfter: number, message: string): string =>
  `event: disconnect\ndata: ${JSON.stringify({ type: 'Disconnect', reason, resumeAfter, message })}\n\n`;

export const HEARTBEAT = ': heartbeat\n\n';
