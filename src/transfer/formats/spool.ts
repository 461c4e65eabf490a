// A temporary newline-delimited file of features for writers whose header needs all columns first (CSV, FlatGeobuf): memory stays flat whatever the export's size.
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TransferFeature } from '../transfer-feature.js';
import { hasZ } from './wkt.js';
import { put } from './output-stream.js';

export type ValueKind = 'boolean' | 'integer' | 'number' | 'string' | 'json';

const kindOf = (value: unknown): ValueKind =>
  typeof value === 'boolean' ? 'boolean' : typeof value === 'number' ? (Number.isInteger(value) ? 'integer' : 'number') : typeof value === 'string' ? 'string' : 'json';

export class Spool {
  private readonly dir = mkdtempSync(join(tmpdir(), 'spatial-hub-spool-'));
  private readonly file = join(this.dir, 'features.ndjson');
  private readonly out = createWriteStream(this.file);
  /** Every property name in first-seen order, with the kind its non-null values share ('json' when they differ, numbers widen). */
  readonly columns = new Map<string, ValueKind | undefined>();
  readonly geometryTypes = new Set<string>();
  /** Whether any geometry has a third coordinate. */
  hasZ = false;
  count = 0;

  async add(feature: TransferFeature): Promise<void> {
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
    await put(this.out, JSON.stringify(feature) + '\n');
  }

  async *replay(): AsyncIterable<TransferFeature> {
    await new Promise<void>((resolve, reject) => this.out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    try {
      for await (const line of createInterface({ input: createReadStream(this.file), crlfDelay: Infinity })) {
        if (line !== '') yield JSON.parse(line) as TransferFeature;
      }
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
