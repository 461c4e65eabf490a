// Writes GeoParquet 1.1 with hyparquet-writer: an id column, the properties as typed columns, the geometry as WKB, and the `geo` file metadata; row groups (ROW_GROUP rows unless asked otherwise) go out as they are written.
import { ByteWriter, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import type { ColumnSource, Writer } from 'hyparquet-writer';
import type { Writable } from 'node:stream';
import type { TransferFeature, WriterFactory } from '../transfer-feature.js';
import { put } from './output-stream.js';
import { spooledWriter } from './spool.js';
import type { ValueKind } from './column-kinds.js';
import { boundsOf, encodeWkb } from './wkb-writer.js';

/** Rows per row group: a reader holds one group at a time; GeoParquet readers skip whole groups by their statistics. */
export const ROW_GROUP = 50_000;
/** The largest row group one may ask for: the writer holds a group's rows and columns in memory. */

type ColumnType = NonNullable<ColumnSource['type']>;
const TYPES: Record<ValueKind, ColumnType> = { boolean: 'BOOLEAN', integer: 'INT64', number: 'DOUBLE', string: 'STRING', json: 'JSON' };

/** A ByteWriter that hands what it holds to the output after each row group, so the file is never held whole. */
function streamWriter(out: Writable): Writer {
  const bytes = new ByteWriter();
  const flush = async () => {
    const chunk = new Uint8Array(bytes.buffer, 0, bytes.index).slice();
    bytes.index = 0;
    if (chunk.length > 0) await put(out, chunk);
  };
  return Object.assign(bytes, { flush, finish: flush });
}

/** The GeoParquet name of a geometry type, with " Z" for a third coordinate (the specification's geometry_types). */
const typeName = (type: string, z: boolean) => (z ? `${type} Z` : type);

export const writeGeoParquet: WriterFactory = (out, options) => {
  const rowGroup = options?.rowGroupSize ?? ROW_GROUP;
  return spooledWriter(async (spool) => {
    const names = [...spool.columns.keys()].filter((name) => name !== 'id');
    // The geometry column keeps its usual name unless a property has it.
    const geometryColumn = names.includes('geometry') ? '_geometry' : 'geometry';
    const kinds = names.map((name) => spool.columns.get(name) ?? 'string');
    const dims = spool.hasZ ? 3 : 2;
    const columns: ColumnSource[] = [
      { name: 'id', data: [], type: 'STRING' },
      ...names.map((name, i) => ({ name, data: [], type: TYPES[kinds[i]] })),
      { name: geometryColumn, data: [], type: 'BYTE_ARRAY' },
    ];
    const bbox = [Infinity, Infinity, -Infinity, -Infinity];
    const kvMetadata: Array<{ key: string; value: string }> = [];
    const parquet = new ParquetWriter({ writer: streamWriter(out), schema: schemaFromColumnData({ columnData: columns }), kvMetadata, createdBy: 'spatial-hub' });
    const writeGroup = async (rows: TransferFeature[]) => {
      const data: unknown[][] = columns.map(() => new Array<unknown>(rows.length));
      rows.forEach((feature, row) => {
        data[0][row] = feature.id ?? null;
        names.forEach((name, i) => {
          const value = feature.properties[name];
          data[i + 1][row] = value === undefined || value === null ? null : kinds[i] === 'integer' ? BigInt(value as number) : value;
        });
        const geometry = feature.geometry;
        const bounds = geometry === null ? undefined : boundsOf(geometry);
        if (bounds) for (let k = 0; k < 4; k++) bbox[k] = k < 2 ? Math.min(bbox[k], bounds[k]) : Math.max(bbox[k], bounds[k]);
        data[columns.length - 1][row] = geometry === null ? null : encodeWkb(geometry, dims);
      });
      await parquet.write({ columnData: columns.map((column, i) => ({ ...column, data: data[i] })), rowGroupSize: rows.length });
    };
    let rows: TransferFeature[] = [];
    for await (const feature of spool.replay()) {
      rows.push(feature);
      if (rows.length === rowGroup) {
        await writeGroup(rows);
        rows = [];
      }
    }
    if (rows.length > 0) await writeGroup(rows);
    const types = [...spool.geometryTypes].filter((type) => type !== 'null').map((type) => typeName(type, spool.hasZ)).sort();
    // Written into the footer by finish(): the bbox is known only once every row is out.
    kvMetadata.push({ key: 'geo', value: JSON.stringify({
      version: '1.1.0', primary_column: geometryColumn,
      columns: { [geometryColumn]: { encoding: 'WKB', geometry_types: types, ...(bbox[0] === Infinity ? {} : { bbox }) } },
    }) });
    await parquet.finish();
  });
};
