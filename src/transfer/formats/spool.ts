// A temporary newline-delimited file of features for writers whose header needs all columns first (CSV, FlatGeobuf): memory stays flat whatever the export's size.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FeatureText, featureTextString, type FormatWriter, type TransferFeature } from '../transfer-feature.js';
import { hasZ } from './wkt.js';
import { OutputBatch } from './output-stream.js';

const LINE_FEED = 0x0a;
const LINE_END = Buffer.from('\n');

export type ValueKind = 'boolean' | 'integer' | 'number' | 'string' | 'json';

const kindOf = (value: unknown): ValueKind =>
  typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value === 'string' ? 'string' : 'json';

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

  add(feature: TransferFeature): Promise<void> {
    this.note(feature);
    this.batch.add(Buffer.from(JSON.stringify(feature)));
    this.batch.add(LINE_END);
    return this.batch.settle();
  }

  /** A feature that comes as plain text (writeText): parsed once for its columns, its text spooled as it is. */
  addText(text: FeatureText): Promise<void> {
    this.note(JSON.parse(featureTextString(text)) as TransferFeature);
    this.batch.addText(text);
    this.batch.add(LINE_END);
    return this.batch.settle();
  }

  private note(feature: TransferFeature): void {
    for (const [key, value] of Object.entries(feature.properties)) {
      const seen = this.columns.get(key);
      if (value === null || value === undefined) {
        if (!this.columns.has(key)) this.columns.set(key, undefined);
        continue;
      }
      const kind = kindOf(value);
      const merged = seen === undefined || seen === kind ? kind
        : (seen === 'integer' && kind === 'number') || (seen === 'number' && kind === 'integer') ? 'number' : 'json';
      this.columns.set(key, merged);
    }
    this.geometryTypes.add(feature.geometry?.type ?? 'null');
    if (feature.geometry && !this.hasZ) this.hasZ = hasZ(feature.geometry);
    this.count++;
  }

  /** The features again, a read chunk's lines at a time (split on the bytes; readline decodes and splits slower). */
  async *replay(): AsyncIterable<TransferFeature> {
    await this.batch.flush();
    await new Promise<void>((resolve, reject) => this.out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    try {
      let rest: Buffer = Buffer.alloc(0);
      for await (const chunk of createReadStream(this.file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
        const bytes = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
        const features: TransferFeature[] = [];
        let start = 0;
        for (let end = bytes.indexOf(LINE_FEED); end >= 0; end = bytes.indexOf(LINE_FEED, start)) {
          if (end > start) features.push(JSON.parse(bytes.toString('utf8', start, end)) as TransferFeature);
          start = end + 1;
        }
        rest = bytes.subarray(start);
        yield* features;
      }
      if (rest.length > 0) yield JSON.parse(rest.toString('utf8')) as TransferFeature;
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}

/** A writer that spools every feature (as an object or as plain text) and writes the file at the end, from the spool. */
export function spooledWriter(end: (spool: Spool) => Promise<void>): FormatWriter {
  const spool = new Spool();
  return { write: (feature) => spool.add(feature), writeText: (text) => spool.addText(text), end: () => end(spool) };
}
