// The readers and writers by format name, and the detection of a file's format from its first bytes and its name.
import type { FormatReader, WriterFactory } from '../transfer-feature.js';
import { ownMember } from '../../core/json.js';

/** A reader that reads the items it skips (ReaderOptions.skip) and drops them, for formats without a cheaper way. */
const skipping = (reader: FormatReader): FormatReader => async function* (source, options) {
  let index = 0;
  for await (const item of reader(source, options)) if (index++ >= (options.skip ?? 0)) yield item;
};

/**
 * Each format's reader and writer are loaded when asked for: a command uses one format, and loading all of them (the
 * Parquet, GeoPackage, CSV and JSON stream libraries) cost an export of 200,000 points a fifth of its time.
 */
export const READERS = {
  geojson: async () => skipping((await import('./geojson-reader.js')).readGeoJson),
  geojsonseq: async () => (await import('./geojson-seq-reader.js')).readGeoJsonSeq,
  csv: async () => skipping((await import('./csv-reader.js')).readCsv),
  flatgeobuf: async () => skipping((await import('./flatgeobuf-reader.js')).readFlatGeobuf),
  geopackage: async () => skipping((await import('./geopackage-reader.js')).readGeoPackage),
  geoparquet: async () => skipping((await import('./geoparquet-reader.js')).readGeoParquet),
} satisfies Record<string, () => Promise<FormatReader>>;
export type InputFormat = keyof typeof READERS;

export const WRITERS = {
  geojson: async () => (await import('./geojson-writer.js')).writeGeoJson,
  geojsonseq: async () => (await import('./geojson-seq-writer.js')).writeGeoJsonSeq,
  csv: async () => (await import('./csv-writer.js')).writeCsv,
  flatgeobuf: async () => (await import('./flatgeobuf-writer.js')).writeFlatGeobuf,
  geopackage: async () => (await import('./geopackage-writer.js')).writeGeoPackage,
  geoparquet: async () => (await import('./geoparquet-writer.js')).writeGeoParquet,
} satisfies Record<string, () => Promise<WriterFactory>>;
export type OutputFormat = keyof typeof WRITERS;

/** The most rows GeoParquet's row groups may hold (--row-group-size, an export job's rowGroupSize). */
export const MAX_ROW_GROUP = 1_000_000;

/** The file name extension and media type of each output format (downloads of export jobs). */
export const OUTPUT_FILES: Record<OutputFormat, { extension: string; mediaType: string }> = {
  geojson: { extension: 'geojson', mediaType: 'application/geo+json' },
  geojsonseq: { extension: 'geojsonl', mediaType: 'application/geo+json-seq' },
  csv: { extension: 'csv', mediaType: 'text/csv; charset=utf-8' },
  flatgeobuf: { extension: 'fgb', mediaType: 'application/flatgeobuf' },
  geopackage: { extension: 'gpkg', mediaType: 'application/geopackage+sqlite3' },
  geoparquet: { extension: 'parquet', mediaType: 'application/vnd.apache.parquet' },
};

const ALIASES: Record<string, InputFormat> = {
  geojson: 'geojson', json: 'geojson', geojsonseq: 'geojsonseq', geojsonl: 'geojsonseq', geojsons: 'geojsonseq', ndjson: 'geojsonseq', jsonl: 'geojsonseq',
  csv: 'csv', flatgeobuf: 'flatgeobuf', fgb: 'flatgeobuf', geopackage: 'geopackage', gpkg: 'geopackage',
  geoparquet: 'geoparquet', parquet: 'geoparquet',
};

/** A format name or alias as given to --format; undefined when unknown. */
export const formatNamed = (name: string): InputFormat | undefined => ownMember(ALIASES, name.toLowerCase());

export function formatOfName(fileName: string): InputFormat | undefined {
  const extension = /\.([a-z0-9]+)$/.exec(fileName.toLowerCase())?.[1];
  return extension === undefined ? undefined : ownMember(ALIASES, extension);
}

const startsWith = (head: Uint8Array, magic: string) => Buffer.from(head.subarray(0, magic.length)).toString('latin1') === magic;

/**
 * Binary formats by their magic numbers first (a misnamed file still reads); then the name; then JSON text, told apart by
 * whether a second object starts on a later line.
 */
export function detectFormat(fileName: string | undefined, head: Uint8Array): InputFormat | undefined {
  if (startsWith(head, 'fgb')) return 'flatgeobuf';
  if (startsWith(head, 'SQLite format 3')) return 'geopackage';
  if (startsWith(head, 'PAR1')) return 'geoparquet';
  const named = fileName === undefined ? undefined : formatOfName(fileName);
  if (named !== undefined) return named;
  const text = Buffer.from(head).toString('utf8').replace(/^\uFEFF/, '').replace(/^[\s\u001e]+/, '');
  if (text.startsWith('{')) return /\}[ \t]*\r?\n[\s\u001e]*\{/.test(text) ? 'geojsonseq' : 'geojson';
  return undefined;
}
