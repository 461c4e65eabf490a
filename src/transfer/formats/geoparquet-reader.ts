// Reads GeoParquet (1.0, 1.1, and Parquet's own GEOMETRY type) with hyparquet, one row group at a time: the primary geometry column from the `geo` metadata, WKB decoded per feature.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import type { FileMetaData } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { type FormatReader, type Geometry, InputError, tableFeature } from '../transfer-feature.js';
import { decodeWkb } from './wkb.js';

interface GeoColumn {
  encoding?: string;
  /** GeoParquet 1.1: a struct column of each row's bbox, which is derived data and not a property. */
  covering?: { bbox?: { xmin?: unknown[] } };
  crs?: { id?: { authority?: string; code?: string | number } } | null;
}

/** Coordinate systems the hub stores as they are: longitude/latitude on WGS 84 (the default when `crs` is absent). */
const LON_LAT = new Set(['OGC:CRS84', 'EPSG:4326', 'OGC:CRS84h', 'EPSG:4979']);

/** The primary geometry column and the bbox covering columns to leave out; an InputError when the file is no GeoParquet the hub can read. */
function geometryColumn(metadata: FileMetaData): { name: string; skip: Set<string> } {
  const geo = metadata.key_value_metadata?.find(({ key }) => key === 'geo')?.value;
  if (geo === undefined || geo === null) {
    // A Parquet file without GeoParquet metadata may still have a column of Parquet's GEOMETRY type.
    const native = metadata.schema.find((element) => element.logical_type?.type === 'GEOMETRY' || element.logical_type?.type === 'GEOGRAPHY');
    if (native) return { name: native.name, skip: new Set([native.name]) };
    throw new InputError('a Parquet file without GeoParquet "geo" metadata or a GEOMETRY column', 'the file');
  }
  let parsed: { primary_column?: unknown; columns?: Record<string, GeoColumn> };
  try {
    parsed = JSON.parse(geo) as typeof parsed;
  } catch {
    throw new InputError('the GeoParquet "geo" metadata is not JSON', 'the file');
  }
  const name = parsed.primary_column;
  const column = typeof name === 'string' ? parsed.columns?.[name] : undefined;
  if (typeof name !== 'string' || column === undefined) throw new InputError('the GeoParquet "geo" metadata names no primary_column among its columns', 'the file');
  if (column.encoding?.toUpperCase() !== 'WKB') throw new InputError(`the geometry column "${name}" is encoded as ${JSON.stringify(column.encoding)}; only WKB is read`, 'the file');
  const id = column.crs?.id;
  if (column.crs !== undefined && column.crs !== null && !(id && LON_LAT.has(`${id.authority}:${id.code}`))) {
    throw new InputError(`the geometry column "${name}" is in ${id ? `${id.authority}:${id.code}` : 'a coordinate system without an id'}; the hub stores longitude/latitude (WGS 84): reproject it first (ogr2ogr -t_srs EPSG:4326)`, 'the file');
  }
  const skip = new Set([name]);
  for (const each of Object.values(parsed.columns ?? {})) {
    const covering = each.covering?.bbox?.xmin?.[0];
    if (typeof covering === 'string') skip.add(covering);
  }
  return { name, skip };
}

/** Parquet values as JSON values: 64-bit integers as numbers (as text past 2^53), times as ISO text, bytes as base64. */
function plainValue(value: unknown): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(plainValue);
  if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, plainValue(item)]));
  return value === undefined ? null : value;
}

/** An empty geometry (no positions) has no place on a map, and the hub stores none: the feature keeps its properties with a null geometry. */
function isEmpty(geometry: Geometry): boolean {
  const hasPosition = (value: unknown): boolean => Array.isArray(value) && (typeof value[0] === 'number' || value.some(hasPosition));
  if (geometry.type === 'GeometryCollection') return (geometry.geometries ?? []).every(isEmpty);
  return !hasPosition(geometry.coordinates);
}

// WKB stays bytes: it is decoded per feature below, so a bad geometry is one bad record, not a failed row group.
const KEEP_BYTES = { geometryFromBytes: (bytes: Uint8Array) => bytes, geographyFromBytes: (bytes: Uint8Array) => bytes };

export const readGeoParquet: FormatReader = async function* (source, options) {
  if (source.path === undefined) throw new InputError('a GeoParquet file is read from a file, not from stdin', 'the input');
  let file: Awaited<ReturnType<typeof asyncBufferFromFile>>;
  let metadata: FileMetaData;
  try {
    file = await asyncBufferFromFile(source.path);
    metadata = await parquetMetadataAsync(file, { parsers: KEEP_BYTES });
  } catch (error) {
    throw new InputError(`not a Parquet file (${(error as Error).message})`, 'the file');
  }
  const { name: geometryName, skip } = geometryColumn(metadata);
  let index = 0;
  let rowStart = 0;
  for (const group of metadata.row_groups) {
    const rowEnd = rowStart + Number(group.num_rows);
    const rows = await parquetReadObjects({ file, metadata, rowStart, rowEnd, compressors, parsers: KEEP_BYTES });
    rowStart = rowEnd;
    for (const row of rows) {
      const position = `feature ${index++}`;
      const bytes = row[geometryName] as unknown;
      let geometry: Geometry | null = null;
      if (bytes !== null && bytes !== undefined) {
        try {
          if (!(bytes instanceof Uint8Array)) throw new Error(`the geometry column "${geometryName}" holds no WKB`);
          geometry = decodeWkb(bytes);
        } catch (error) {
          yield { error: (error as Error).message, position };
          continue;
        }
        if (isEmpty(geometry)) geometry = null;
      }
      const properties: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(row)) if (!skip.has(key)) properties[key] = plainValue(value);
      yield { feature: tableFeature(geometry, properties, options.idProperty), position };
    }
  }
};
