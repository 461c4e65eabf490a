// One export: pages through the space with `iterate` and its handle, hands each feature to the format's writer (as text where it takes texts) or copies the hub's own GeoJSONSeq, and reports progress.
import { createWriteStream, renameSync, rmSync, statSync } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { type OutputFormat, WRITERS } from './formats/format-registry.js';
import type { AnswerHead, HubClient } from './hub-client.js';
import { type PageFetch, PageReadAhead, SEQUENCE_TYPE } from './page-read-ahead.js';
import { writeTextSeqAsLines } from './formats/geojson-seq-writer.js';
import { Progress } from './progress.js';
import { type OtherFeature, pageFeatures, plain, type StoredFeature, writePageFeatures, writePlainPage } from './formats/plain-feature-text.js';
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

/** The exit code of an interrupted export, as of an interrupted import (cli/transfer-commands.ts). */
const INTERRUPTED = 130;

/**
 * Sequence pages asked for ahead of the one being written (page-read-ahead.ts): the one whose body is read next and the
 * one after it, so the hub computes a page while this process reads one and writes another. At most three pages'
 * bodies are held (the chunk's features each), against two with one page ahead.
 */
const PAGES_AHEAD = 2;

const intersects = (a: [number, number, number, number], b: [number, number, number, number]) => a[0] <= b[2] && b[0] <= a[2] && a[1] <= b[3] && b[1] <= a[3];

/**
 * Where a file export is written until it is complete: beside the output (one file system, so the rename that completes
 * it is atomic), so that a refused, failed or interrupted export never leaves a truncated or headerless file under the
 * name asked for, nor replaces an existing one. A device or a pipe (`/dev/stdout`, a FIFO) is written directly.
 */
function partialOf(output: string): string | undefined {
  const existing = statSync(output, { throwIfNoEntry: false });
  return existing === undefined || existing.isFile() ? `${output}.partial` : undefined;
}

export async function runExport(options: ExportOptions): Promise<{ written: number }> {
  const partial = options.output === undefined ? undefined : partialOf(options.output);
  const path = partial ?? options.output;
  const out: Writable = path === undefined ? process.stdout : createWriteStream(path);
  const discard = () => {
    if (partial === undefined) return;
    out.destroy();
    rmSync(partial, { force: true });
  };
  const progress = new Progress({ out: process.stderr, intervalMs: options.progressIntervalMs });
  const query = new URLSearchParams({ limit: String(options.chunk) });
  if (options.tags) query.set('tags', options.tags);
  if (options.version !== undefined) query.set('version', options.version);
  let written = 0;
  // A hub on this machine writes GeoJSONSeq (without --bbox, which is applied here from each feature's geometry) and this
  // process copies its answer: the two share the cores, and the hub cuts the namespace out of a page it holds anyway
  // (in SQL where the storage keeps its span). FlatGeobuf takes the same plain texts: its encoder then has no namespace
  // to scan past. A remote hub is asked for GeoJSON, which it compresses (it does not compress sequences).
  const copied = (options.format === 'geojsonseq' || options.format === 'flatgeobuf') && options.bbox === undefined && options.client.local;
  const fetchPage = (handle: string | undefined, sequence: boolean): PageFetch => {
    if (handle !== undefined) query.set('handle', handle);
    let headed: (head: AnswerHead | undefined) => void = () => undefined;
    const head = new Promise<AnswerHead | undefined>((resolve) => { headed = resolve; });
    const answer = options.client.requestBytes('GET', `/hub/spaces/${encodeURIComponent(options.space)}/iterate?${query}`, {
      accept: sequence ? SEQUENCE_TYPE : 'application/geo+json',
      // A hub on this machine answers uncompressed: gzip would cost the hub and this process CPU and save no time.
      ...(options.client.local ? { 'accept-encoding': 'identity' } : {}),
    }, headed);
    answer.then(headed, () => headed(undefined));
    return { head, answer };
  };
  const pages = new PageReadAhead((handle) => fetchPage(handle, true), PAGES_AHEAD);
  // The first page is asked for before the writer's module is loaded: the hub computes it meanwhile.
  pages.add(fetchPage(undefined, copied));
  const writer = (await WRITERS[options.format]())(out, { rowGroupSize: options.rowGroupSize, file: path });
  const wanted = (geometry: Geometry | null) => {
    if (options.bbox === undefined) return true;
    const box = envelope(geometry);
    return box !== undefined && intersects(box, options.bbox);
  };
  // Ctrl-C or a kill stops an export at once (it has no resume): the writer's temporary files and the partial output go
  // with it.
  const interrupt = () => {
    writer.release();
    discard();
    process.stderr.write('spatial-hub export: interrupted\n');
    process.exit(INTERRUPTED);
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  try {
    // The pages after a sequence page are asked for by `pages` as their predecessors' headers arrive (page-read-ahead.ts).
    for (let answer = await pages.next(); answer !== undefined; answer = await pages.next()) {
      const { body: bytes, contentType } = answer;
      progress.bytes += bytes.length;
      if (contentType === SEQUENCE_TYPE) {
        written += options.format === 'geojsonseq' ? await writeTextSeqAsLines(out, bytes) : await writePlainPage(writer, bytes);
        progress.features = written;
        continue;
      }
      // A GeoJSON page (asked for, or a hub that does not write sequences): the next ones are asked for as GeoJSON too.
      // The hub's pages are split without parsing their features (plain-feature-text.ts); another layout is parsed whole.
      const page = pageFeatures(bytes);
      type Page = { features: TransferFeature[]; handle?: unknown };
      const parsed: Page | undefined = page === undefined ? JSON.parse(bytes.toString('utf8')) as Page : undefined;
      const handle: unknown = (page?.members ?? parsed)?.handle;
      // Asked for before this page is written: the hub reads it while this process writes.
      if (typeof handle === 'string') pages.add(fetchPage(handle, false));
      const kept = options.bbox === undefined ? page?.features ?? [] : (page?.features ?? []).filter((feature) => wanted(geometryOf(bytes, feature)));
      await writePageFeatures(writer, bytes, kept);
      written += kept.length;
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
    if (partial !== undefined && options.output !== undefined) renameSync(partial, options.output);
  } catch (error) {
    discard();
    throw error;
  } finally {
    pages.stop();
    writer.release();
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
  progress.finish({ format: options.format, written, retries: options.client.retried });
  return { written };
}
