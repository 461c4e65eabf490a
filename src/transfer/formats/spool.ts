// A temporary newline-delimited file of features for writers whose header needs all columns first (CSV, FlatGeobuf): memory stays flat whatever the export's size.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FeatureText, featureTextString, type FormatWriter, type Geometry, type TransferFeature } from '../transfer-feature.js';
import { LINE_FEED } from '../../core/json-bytes.js';
import { hasZ } from './wkt.js';
import { OutputBatch } from './output-stream.js';
import { scanStoredFeature, type StoredFeature } from './plain-feature-text.js';
import { firstPositionHasZ, geometryTypeToken, kindOfToken, TokenNames } from './stored-feature-values.js';

export type ValueKind = 'boolean' | 'integer' | 'number' | 'string' | 'json';

const isStored = (text: FeatureText): text is StoredFeature => (text as Partial<StoredFeature>).members !== undefined;

/**
 * Integer columns are 64-bit (FlatGeobuf Long, Parquet INT64): a whole number beyond the exact doubles (2^53) is
 * typed as a double, which holds it as well as the JSON number it was parsed from, instead of failing the export.
 */
const kindOf = (value: unknown): ValueKind =>
  typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? (Number.isSafeInteger(value) ? 'integer' : 'number') : typeof value === 'string' ? 'string' : 'json';

/** A spooled line [start, end) as the replay gives it: a stored text scanned (no objects built) where it has that shape, else parsed. */
export function spooledFeature(bytes: Buffer, start: number, end: number): StoredFeature | TransferFeature {
  const scanned = scanStoredFeature(bytes, start, end);
  return scanned?.end === end ? scanned : JSON.parse(bytes.toString('utf8', start, end)) as TransferFeature;
}

export class Spool {
  private readonly dir = mkdtempSync(join(tmpdir(), 'spatial-hub-spool-'));
  private readonly file = join(this.dir, 'features.ndjson');
  private readonly out = createWriteStream(this.file);
  private readonly batch = new OutputBatch(this.out);
  /** Every property name in first-seen order, with the kind its non-null values share ('json' when they differ, numbers widen). */
  readonly columns = new Map<string, ValueKind | undefined>();
  readonly geometryTypes = new Set<string>();
  /** Whether any geometry has a third coordinate. */
  hasZ = false;
  count = 0;
  /**
   * How often a column's kind changed after it had one, or hasZ turned true: what a writer that encodes features as they
   * arrive (FlatGeobuf) encoded before such a change is stale, and is encoded again from the spooled text.
   */
  changes = 0;
  /** Bytes spooled so far: where the next feature's line starts in the file. */
  spooled = 0;
  private ended: Promise<void> | undefined;
  private readonly names = new TokenNames();
  private readonly types = new TokenNames();

  add(feature: TransferFeature): Promise<void> {
    this.takeFeature(feature);
    return this.batch.settle();
  }

  /** add() without waiting for the file; the spooled line, which spooledFeature() reads as the replay does. */
  takeFeature(feature: TransferFeature): Buffer {
    this.note(feature);
    const line = Buffer.from(JSON.stringify(feature));
    this.batch.add(line);
    this.batch.addByte(LINE_FEED);
    this.spooled += line.length + 1;
    return line;
  }

  /** A feature that comes as plain text (writeText): its text spooled as it is; read for its columns where it is a stored text (scanned already), else parsed once. */
  addText(text: FeatureText): Promise<void> {
    this.take(text);
    return this.batch.settle();
  }

  /** addText without waiting for the file: the caller awaits settle() (once per page, not per feature). */
  take(text: FeatureText): void {
    if (isStored(text)) this.noteText(text);
    else this.note(JSON.parse(featureTextString(text)) as TransferFeature);
    this.batch.addText(text);
    this.batch.addByte(LINE_FEED);
    this.spooled += text.cutFrom - text.start + text.end - text.cutTo + 1;
  }

  /** Waits when the spool's file asked to (back-pressure). */
  settle(): Promise<void> {
    return this.batch.settle();
  }

  /** A file in the spool's directory (removed with it), for a writer's own temporary data. */
  path(name: string): string {
    return join(this.dir, name);
  }

  private noteZ(z: boolean): void {
    if (!z || this.hasZ) return;
    this.hasZ = true;
    this.changes++;
  }

  private note(feature: TransferFeature): void {
    for (const [key, value] of Object.entries(feature.properties)) this.noteValue(key, value === null || value === undefined ? undefined : kindOf(value));
    this.geometryTypes.add(feature.geometry?.type ?? 'null');
    if (feature.geometry && !this.hasZ) this.noteZ(hasZ(feature.geometry));
    this.count++;
  }

  /** The same as note() for the parsed feature, read from the text's bytes. */
  private noteText(text: StoredFeature): void {
    const { bytes, members } = text;
    for (let i = 0; i < members.length; i += 4) {
      this.noteValue(this.names.of(bytes, members[i], members[i + 1], i / 4), kindOfToken(bytes, members[i + 2], members[i + 3]));
    }
    const type = geometryTypeToken(bytes, text.geometryStart);
    if (type === undefined) {
      const geometry = JSON.parse(bytes.toString('utf8', text.geometryStart, text.geometryEnd)) as Geometry | null;
      this.geometryTypes.add(geometry?.type ?? 'null');
      if (geometry && !this.hasZ) this.noteZ(hasZ(geometry));
    } else {
      this.geometryTypes.add(this.types.of(bytes, type[0], type[1], 0));
      if (!this.hasZ) {
        this.noteZ(firstPositionHasZ(bytes, type[1])
          ?? hasZ(JSON.parse(bytes.toString('utf8', text.geometryStart, text.geometryEnd)) as Geometry));
      }
    }
    this.count++;
  }

  /** A property's value of the given kind (undefined: null): the column keeps the kind all its values share ('json' when they differ, numbers widen). */
  private noteValue(key: string, kind: ValueKind | undefined): void {
    const seen = this.columns.get(key);
    if (kind === undefined) {
      if (!this.columns.has(key)) this.columns.set(key, undefined);
      return;
    }
    const merged = seen === undefined || seen === kind ? kind
      : (seen === 'integer' && kind === 'number') || (seen === 'number' && kind === 'integer') ? 'number' : 'json';
    if (seen !== undefined && merged !== seen) this.changes++;
    this.columns.set(key, merged);
  }

  /** The features again, each as parsed. */
  replay(): AsyncIterable<TransferFeature> {
    return this.lines((bytes, start, end) => JSON.parse(bytes.toString('utf8', start, end)) as TransferFeature);
  }

  /** The features again (those spooled in the bytes [from, to) of the file), each as a stored text scanned (no objects built) where it has that shape, else parsed. */
  replayTexts(from = 0, to = Infinity): AsyncIterable<StoredFeature | TransferFeature> {
    return this.lines(spooledFeature, from, to);
  }

  /** The spool's file complete on disk, once. */
  end(): Promise<void> {
    this.ended ??= this.batch.flush().then(() => new Promise<void>((resolve, reject) => this.out.end((error?: Error | null) => (error ? reject(error) : resolve()))));
    return this.ended;
  }

  /** Removes the spool's directory, closing its file first if the export stopped while it was written. */
  remove(): void {
    this.out.destroy();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Each spooled line of the bytes [from, to), a read chunk's lines at a time (split on the bytes; readline decodes and splits slower). */
  private async *lines<T>(read: (bytes: Buffer, start: number, end: number) => T, from = 0, to = Infinity): AsyncIterable<T> {
    await this.end();
    if (from >= to) return;
    let rest: Buffer = Buffer.alloc(0);
    const range = { highWaterMark: 1024 * 1024, start: from, ...(to === Infinity ? {} : { end: to - 1 }) };
    for await (const chunk of createReadStream(this.file, range) as AsyncIterable<Buffer>) {
      const bytes = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      const items: T[] = [];
      let start = 0;
      for (let end = bytes.indexOf(LINE_FEED); end >= 0; end = bytes.indexOf(LINE_FEED, start)) {
        if (end > start) items.push(read(bytes, start, end));
        start = end + 1;
      }
      rest = bytes.subarray(start);
      yield* items;
    }
    if (rest.length > 0) yield read(rest, 0, rest.length);
  }
}

/** A writer that spools every feature (as an object or as plain text) and writes the file at the end, from the spool. */
export function spooledWriter(end: (spool: Spool) => Promise<void>): FormatWriter {
  const spool = new Spool();
  const finish = async () => {
    try {
      await end(spool);
    } finally {
      spool.remove();
    }
  };
  return { write: (feature) => spool.add(feature), writeText: (text) => spool.addText(text), end: finish, release: () => spool.remove() };
}
