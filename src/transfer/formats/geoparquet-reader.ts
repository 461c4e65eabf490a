// Reads GeoParquet with hyparquet (pure JS), one row group at a time: the `geo` metadata names the WKB geometry column, which hyparquet decodes.
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from 'hyparquet';
import { type FormatReader, type Geometry, InputError, tableFeature } from '../transfer-feature.js';
import { decodeWkb } from './wkb.js';

/** Parquet INT64 arrives as bigint: a number when it is exact, else its decimal string. */
const plain = (value: unknown): unknown =>
  typeof value === 'bigint' ? (Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()) : value;

export const readGeoParquet: FormatReader = async function* (source, options) {
  if (source.path === undefined) throw new InputError('a GeoParquet file is read from a file, not from stdin', 'the input');
  let file: Awaited<ReturnType<typeof asyncBufferFromFile>>;
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>;
  try {
    file = await asyncBufferFromFile(source.path);
    metadata = await parquetMetadataAsync(file);
  } catch (error) {
    throw new InputError(`not a readable Parquet file (${(error as Error).message})`, 'the file');
  }
  const geo = metadata.key_value_metadata?.find(({ key }) => key === 'geo')?.value;
  const column = geo === undefined ? undefined : (JSON.parse(geo) as { primary_column?: string }).primary_column;
  if (column === undefined) throw new InputError('not a GeoParquet file (no "geo" metadata naming the geometry column)', 'the file');
  let row = 0;
  for (const group of metadata.row_groups) {
    const rows = await parquetReadObjects({ file, metadata, rowStart: row, rowEnd: row + Number(group.num_rows) });
    for (const record of rows) {
      const position = `feature ${row++}`;
      const properties: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(record)) if (key !== column) properties[key] = plain(value);
      const value: unknown = record[column];
      let geometry: Geometry | null;
      try {
        geometry = value === null || value === undefined ? null : value instanceof Uint8Array ? decodeWkb(value) : value as Geometry;
      } catch (error) {
        yield { error: (error as Error).message, position };
        continue;
      }
      yield { feature: tableFeature(geometry, properties, options.idProperty), position };
    }
  }
};
