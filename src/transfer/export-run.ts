// One export: pages through the space with `iterate` and its handle, hands each feature to the format's writer, and reports progress.
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { type OutputFormat, WRITERS } from './formats/format-registry.js';
import type { HubClient } from './hub-client.js';
import { Progress } from './progress.js';
import type { Geometry, TransferFeature } from './transfer-feature.js';

export interface ExportOptions {
  space: string;
  format: OutputFormat;
  /** west, south, east, north */
  bbox?: [number, number, number, number];
  tags?: string;
  version?: string;
  chunk: number;
  /** A file; stdout when undefined. */
  output?: string;
  progressIntervalMs: number;
  client: HubClient;
}

const NAMESPACE = '@ns:com:here:xyz';

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

const intersects = (a: [number, number, number, number], b: [number, number, number, number]) => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

/** The hub's namespace (tags, timestamps) stays in the hub: a file gets the feature as the user wrote it. */
export function plain(feature: TransferFeature): TransferFeature {
  const properties = { ...(feature.properties ?? {}) };
  delete properties[NAMESPACE];
  return { type: 'Feature', id: feature.id, geometry: feature.geometry ?? null, properties };
}

export async function runExport(options: ExportOptions): Promise<{ written: number }> {
  const out: Writable = options.output === undefined ? process.stdout : createWriteStream(options.output);
  const writer = WRITERS[options.format](out);
  const progress = new Progress({ out: process.stderr, intervalMs: options.progressIntervalMs });
  const query = new URLSearchParams({ limit: String(options.chunk) });
  if (options.tags) query.set('tags', options.tags);
  if (options.version !== undefined) query.set('version', options.version);
  let written = 0;
  const fetchPage = (handle?: string) => {
    if (handle !== undefined) query.set('handle', handle);
    return options.client.request('GET', `/hub/spaces/${encodeURIComponent(options.space)}/iterate?${query}`, undefined, { accept: 'application/geo+json' });
  };
  // The next page is asked for before this one is written: the hub reads it while this process writes (two cores, not one after the other).
  for (let pending: ReturnType<typeof fetchPage> | undefined = fetchPage(); pending !== undefined;) {
    const { text } = await pending;
    progress.bytes += Buffer.byteLength(text);
    const page = JSON.parse(text) as { features: TransferFeature[]; handle?: string };
    pending = page.handle === undefined ? undefined : fetchPage(page.handle);
    // Handled here too: a write that fails leaves the loop, and the page asked for meanwhile must not end the process.
    pending?.catch(() => undefined);
    for (const feature of page.features) {
      if (options.bbox) {
        const box = envelope(feature.geometry);
        if (box === undefined || !intersects(box, options.bbox)) continue;
      }
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
