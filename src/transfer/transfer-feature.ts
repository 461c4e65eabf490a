// The feature shape every format reader yields and every writer takes (plain GeoJSON with a string id), and input errors with their file position.
import type { Readable, Writable } from 'node:stream';

export interface Geometry {
  type: string;
  coordinates?: unknown;
  geometries?: Geometry[];
}

export interface TransferFeature {
  type: 'Feature';
  id?: string;
  geometry: Geometry | null;
  properties: Record<string, unknown>;
}

/** Where a text input stands after an item: the byte after its line and the lines read, so that a resumed read can start there. */
export interface ResumePoint {
  byte: number;
  line: number;
}

/**
 * One item of a reader: a feature, or a bad record that `--on-error skip` may pass over. position reads "line 12" or
 * "feature 7"; `at` is given by readers that can start again after the item (GeoJSONSeq).
 */
export type ReadItem =
  | { feature: TransferFeature; position: string; error?: undefined; text?: string; at?: ResumePoint }
  | { error: string; position: string; feature?: undefined; at?: ResumePoint };

/** Input that cannot be read on (a file that ends mid-feature, a broken CSV quote): the load stops whatever `--on-error` says. */
export class InputError extends Error {
  constructor(message: string, readonly position: string) {
    super(`${position}: ${message}`);
  }
}

/** A file (path known: formats that seek, such as GeoPackage, need it) or stdin. open() may be called once; a file may be opened at a byte. */
export interface InputSource {
  path?: string;
  open(start?: number): Readable;
}

export interface ReaderOptions {
  /** The property holding the feature id; tabular formats default to a column named `id`. */
  idProperty?: string;
  lon?: string;
  lat?: string;
  wkt?: string;
  layer?: string;
  /** Items to pass over at the start (a resumed load's checkpoint): the reader yields from item `skip` on, with its true position. */
  skip?: number;
  /** Where item `skip` starts, as an earlier read's ResumePoint gave it: a reader that can (GeoJSONSeq in a file) starts there instead of reading up to it. */
  from?: ResumePoint;
}

export type FormatReader = (source: InputSource, options: ReaderOptions) => AsyncIterable<ReadItem>;

/** A plain feature's JSON text (UTF-8) inside a larger buffer (an iterate page): bytes [start, end) without [cutFrom, cutTo), the hub's namespace. */
export interface FeatureText {
  bytes: Buffer;
  start: number;
  cutFrom: number;
  cutTo: number;
  end: number;
}

/** The text as a string, for writers that parse it. */
export const featureTextString = (text: FeatureText): string => text.bytes.toString('utf8', text.start, text.cutFrom) + text.bytes.toString('utf8', text.cutTo, text.end);

export interface FormatWriter {
  write(feature: TransferFeature): Promise<void>;
  /**
   * The same for a feature that is already plain JSON text (UTF-8, the namespace cut out: plain-feature-text.ts), which
   * writers of JSON copy as it is instead of parsing and serializing it again. Only writers that gain from it have it.
   */
  writeText?(text: FeatureText): Promise<void>;
  /** Many such texts at once, where a writer copies them without waiting between features (the sequences). */
  writeTexts?(texts: readonly FeatureText[]): Promise<void>;
  /** Plain texts already written as an RFC 8142 text sequence (core/namespace-cut.ts), which a writer of such sequences sends as it is. */
  writeSequence?(sequence: Buffer): Promise<void>;
  end(): Promise<void>;
  /**
   * Removes at once what the writer keeps aside (a spool's temporary files). Every caller calls it when the export
   * stops, either way: after end() nothing is left to remove; instead of end() (a failed, cancelled or interrupted
   * export) it keeps the stopped export's copy of the space out of the temporary directory.
   */
  release(): void;
}

/** Choices of a writer beside the format. */
export interface WriterOptions {
  /** GeoParquet: rows per row group (geoparquet-writer.ts: ROW_GROUP by default, at most format-registry.ts: MAX_ROW_GROUP). */
  rowGroupSize?: number;
  /**
   * The path of the regular file `out` writes, from its start: a writer whose header is known only at the end
   * (FlatGeobuf) may then leave room for it, write the features straight after, and write the header into that room.
   */
  file?: string;
}

export type WriterFactory = (out: Writable, options?: WriterOptions) => FormatWriter;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Checks one parsed GeoJSON value; returns the feature or the reason it is not one. */
export function toFeature(value: unknown, idProperty?: string): TransferFeature | string {
  if (!isObject(value) || value.type !== 'Feature') return 'not a GeoJSON Feature (expected an object with "type": "Feature")';
  const geometry = value.geometry ?? null;
  if (geometry !== null && !(isObject(geometry) && typeof geometry.type === 'string')) return 'the geometry is neither null nor a GeoJSON geometry';
  const properties = value.properties ?? {};
  if (!isObject(properties)) return 'properties is not an object';
  const rawId = idProperty !== undefined ? properties[idProperty] : value.id;
  if (rawId !== undefined && rawId !== null && typeof rawId !== 'string' && typeof rawId !== 'number') return 'the id is neither a string nor a number';
  const feature: TransferFeature = { type: 'Feature', geometry: geometry as Geometry | null, properties: { ...properties } };
  if (idProperty !== undefined) delete feature.properties[idProperty];
  if (rawId !== undefined && rawId !== null) feature.id = String(rawId);
  return feature;
}

/**
 * Whether a parsed value's JSON text says exactly what toFeature made of it, so that an import can send the text as read
 * instead of serializing the feature again: the four members of a Feature and no other (toFeature drops foreign members
 * and fills a missing geometry or properties), a string id, and no id property to move.
 */
export function sendsAsRead(value: unknown, idProperty?: string): boolean {
  return idProperty === undefined && isObject(value) && typeof value.id === 'string' && isObject(value.properties) && value.geometry !== undefined
    && Object.keys(value).length === 4;
}

/** Builds a feature from table columns (CSV, FlatGeobuf, GeoPackage, GeoParquet): the id column leaves the properties. */
export function tableFeature(geometry: Geometry | null, properties: Record<string, unknown>, idProperty = 'id'): TransferFeature {
  const feature: TransferFeature = { type: 'Feature', geometry, properties };
  const id = properties[idProperty];
  if (id !== undefined && id !== null && id !== '') {
    feature.id = String(id);
    delete properties[idProperty];
  }
  return feature;
}
