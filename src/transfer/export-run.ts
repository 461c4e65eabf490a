// One export: pages through the space with `iterate` and its handle, hands each feature to the format's writer (as text where it takes texts), and reports progress.
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { type OutputFormat, WRITERS } from './formats/format-registry.js';
import type { HubClient } from './hub-client.js';
import { Progress } from './progress.js';
import { type OtherFeature, pageFeatures, plain, type StoredFeature, writePageFeature } from './formats/plain-feature-text.js';
import type { Geometry, TransferFeature } from './transfer-feature.js';

export interface ExportOptions {
  space: string;
  format: OutputFormat;
  /** west, south, east, north */
  bbox?: [number, number, number, number];
  tags?: string;
  version?: string;
  chunk: number;
  /** GeoParquet's rows per row group; the writer's default when undefined. */
  rowGroupSize?: number;
  /** A file; stdout when undefined. */
  output?: string;
  progressIntervalMs: number;
  client: HubClient;
}

/** [west, south, east, north] of all positions; undefined for an empty or null geometry. */
function envelope(geometry: Geometry | null): [number, number, number, number] | undefined {
  if (geometry === null) return undefined;
  const box: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
  const walk = (value: unknown): void => {
    if (!Array.isArray(value)) return;
    if (typeof value[0] === 'number') {
      box[0] = Math.min(box[0], value[0]);
      box[1] = Math.min(box[1], value[1] as number);
      box[2] = Math.max(box[2], value[0]);
      box[3] = Math.max(box[3], value[1] as number);
      return;
    }
    value.forEach(walk);
  };
  walk(geometry.coordinates);
  (geometry.geometries ?? []).forEach((part) => walk(part.coordinates));
  return box[0] === Infinity ? undefined : box;
}

/** A page feature's geometry: a stored text's own span is parsed, any other feature whole. */
function geometryOf(bytes: Buffer, feature: StoredFeature | OtherFeature): Geometry | null {
  if (feature.members !== undefined) return JSON.parse(bytes.toString('utf8', feature.geometryStart, feature.geometryEnd)) as Geometry | null;
  return (JSON.parse(bytes.toString('utf8', feature.start, feature.end)) as TransferFeature).geometry ?? null;
}

const intersects = (a: [number, number, number, number], b: [number, number, number, number]) => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

export async function runExport(options: ExportOptions): Promise<{ written: number }> {
  const out: Writable = options.output === undefined ? process.stdout : createWriteStream(options.output);
  const writer = (await WRITERS[options.format]())(out, { rowGroupSize: options.rowGroupSize });
  const progress = new Progress({ out: process.stderr, intervalMs: options.progressIntervalMs });
  const query = new URLSearchParams({ limit: String(options.chunk) });
  if (options.tags) query.set('tags', options.tags);
  if (options.version !== undefined) query.set('version', options.version);
  let written = 0;
  const fetchPage = (handle?: string): Promise<Buffer> => {
    if (handle !== undefined) query.set('handle', handle);
    return options.client.requestBytes('GET', `/hub/spaces/${encodeURIComponent(options.space)}/iterate?${query}`, {
      accept: 'application/geo+json',
      // A hub on this machine answers uncompressed: gzip would cost the hub and this process CPU and save no time.
      ...(options.client.local ? { 'accept-encoding': 'identity' } : {}),
    });
  };
  const wanted = (geometry: Geometry | null) => {
    if (options.bbox === undefined) return true;
    const box = envelope(geometry);
    return box !== undefined && intersects(box, options.bbox);
  };
  // The next page is asked for before this one is written: the hub reads it while this process writes (two cores, not one after the other).
  for (let pending: Promise<Buffer> | undefined = fetchPage(); pending !== undefined;) {
    const bytes: Buffer = await pending;
    progress.bytes += bytes.length;
    // The hub's pages are split without parsing their features (plain-feature-text.ts); another layout is parsed whole.
    const page = pageFeatures(bytes);
    type Page = { features: TransferFeature[]; handle?: unknown };
    const parsed: Page | undefined = page === undefined ? JSON.parse(bytes.toString('utf8')) as Page : undefined;
    const handle: unknown = (page?.members ?? parsed)?.handle;
    pending = typeof handle === 'string' ? fetchPage(handle) : undefined;
    // Handled here too: a write that fails leaves the loop, and the page asked for meanwhile must not end the process.
    pending?.catch(() => undefined);
    for (const feature of page?.features ?? []) {
      if (options.bbox !== undefined && !wanted(geometryOf(bytes, feature))) continue;
      await writePageFeature(writer, bytes, feature);
      written++;
    }
    for (const feature of parsed?.features ?? []) {
      if (!wanted(feature.geometry)) continue;
      await writer.write(plain(feature));
      written++;
    }
    progress.features = written;
  }
  await writer.end();
  if (out !== process.stdout) {
    out.end();
    await finished(out);
  }
  progress.finish({ format: options.format, written, retries: options.client.retried });
  return { written };
}
