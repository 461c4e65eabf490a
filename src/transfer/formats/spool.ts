// A temporary newline-delimited file of features for writers whose header needs all columns first (CSV, GeoPackage, GeoParquet): memory stays flat whatever the export's size.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FeatureText, featureTextString, type FormatWriter, type TransferFeature } from '../transfer-feature.js';
import { LINE_FEED } from '../../core/json-bytes.js';
import { OutputBatch } from './output-stream.js';
import type { StoredFeature } from './plain-feature-text.js';
import { ColumnKinds } from './column-kinds.js';

const isStored = (text: FeatureText): text is StoredFeature => (text as Partial<StoredFeature>).members !== undefined;

/** The features, spooled, with their columns' kinds (ColumnKinds) learnt as they pass. */
export class Spool extends ColumnKinds {
  private readonly dir = mkdtempSync(join(tmpdir(), 'spatial-hub-spool-'));
  private readonly file = join(this.dir, 'features.ndjson');
  private readonly out = createWriteStream(this.file);
  private readonly batch = new OutputBatch(this.out);
  private ended: Promise<void> | undefined;

  add(feature: TransferFeature): Promise<void> {
    this.note(feature);
    this.batch.add(Buffer.from(JSON.stringify(feature)));
    this.batch.addByte(LINE_FEED);
    return this.batch.settle();
  }

  /** A feature that comes as plain text (writeText): its text spooled as it is; read for its columns where it is a stored text (scanned already), else parsed once. */
  addText(text: FeatureText): Promise<void> {
    if (isStored(text)) this.noteText(text);
    else this.note(JSON.parse(featureTextString(text)) as TransferFeature);
    this.batch.addText(text);
    this.batch.addByte(LINE_FEED);
    return this.batch.settle();
  }

  /** The features again, each as parsed. */
  async *replay(): AsyncIterable<TransferFeature> {
    await this.end();
    let rest: Buffer = Buffer.alloc(0);
    // A read chunk's lines at a time, split on the bytes (readline decodes and splits slower).
    for await (const chunk of createReadStream(this.file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
      const bytes = rest.length === 0 ? chunk : Buffer.concat([rest, chunk]);
      const items: TransferFeature[] = [];
      let start = 0;
      for (let end = bytes.indexOf(LINE_FEED); end >= 0; end = bytes.indexOf(LINE_FEED, start)) {
        if (end > start) items.push(JSON.parse(bytes.toString('utf8', start, end)) as TransferFeature);
        start = end + 1;
      }
      rest = bytes.subarray(start);
      yield* items;
    }
    if (rest.length > 0) yield JSON.parse(rest.toString('utf8')) as TransferFeature;
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
