// Writes FlatGeobuf: features are spooled first, because the header lists every column and the geometry type; then each is encoded (flatgeobuf-feature.ts) and written in batches.
import { pad3D } from '../../geo/coordinates.js';
import type { Geometry } from '../../geo/geometry.js';
import { magicbytes } from 'flatgeobuf/lib/mjs/constants.js';
import { ColumnType } from 'flatgeobuf/lib/mjs/flat-geobuf/column-type.js';
import { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { parseGC, parseGeometry } from 'flatgeobuf/lib/mjs/geojson/geometry.js';
import type { ColumnMeta } from 'flatgeobuf/lib/mjs/column-meta.js';
import type { HeaderMeta } from 'flatgeobuf/lib/mjs/header-meta.js';
import type { Geometry as GeoJsonGeometry } from 'geojson';
import type { IParsedGeometry } from 'flatgeobuf/lib/mjs/generic/geometry.js';
import type { WriterFactory } from '../transfer-feature.js';
import { FlatGeobufFeatureEncoder } from './flatgeobuf-feature.js';
import { buildHeader } from './flatgeobuf-header.js';
import { OutputBatch, put } from './output-stream.js';
import { pointCoordinates } from './stored-feature-values.js';
import { spooledWriter, type ValueKind } from './spool.js';

const COLUMN_TYPES: Record<ValueKind, ColumnType> = {
  boolean: ColumnType.Bool, integer: ColumnType.Long, number: ColumnType.Double, string: ColumnType.String, json: ColumnType.Json,
};

const column = (name: string, type: ColumnType): ColumnMeta => ({
  name, type, title: null, description: null, width: -1, precision: -1, scale: -1, nullable: true, unique: false, primary_key: false,
});

/** The geometry as the library's parser gives it; in a 3D file a 2D geometry gets z = 0 (GDAL refuses a feature without Z data there). */
function parsedGeometry(geometry: Geometry | null, hasZ: boolean): IParsedGeometry {
  if (geometry === null) return { xy: [], ends: [], parts: [], type: GeometryType.Unknown };
  const padded = (hasZ ? pad3D(geometry) : geometry) as GeoJsonGeometry;
  return padded.type === 'GeometryCollection' ? parseGC(padded) : parseGeometry(padded);
}

/** What parsedGeometry gives for a point of these coordinates (the library's type says ends and parts, which a point leaves undefined). */
const pointGeometry = (point: number[], hasZ: boolean): IParsedGeometry => ({
  xy: [point[0], point[1]], z: point.length > 2 ? [point[2]] : hasZ ? [0] : undefined, type: GeometryType.Point,
} as IParsedGeometry);

export const writeFlatGeobuf: WriterFactory = (out) => spooledWriter(async (spool) => {
  const names = [...spool.columns.keys()].filter((name) => name !== 'id');
  const columns = [column('id', ColumnType.String), ...names.map((name) => column(name, COLUMN_TYPES[spool.columns.get(name) ?? 'string']))];
  const types = [...spool.geometryTypes].filter((type) => type !== 'null');
  const single = types.length === 1 ? (GeometryType as unknown as Record<string, GeometryType>)[types[0]] : undefined;
  const header: HeaderMeta = {
    geometryType: single ?? GeometryType.Unknown, columns, envelope: null, featuresCount: spool.count, indexNodeSize: 0,
    crs: null, title: null, description: null, metadata: null,
  };
  await put(out, magicbytes);
  await put(out, buildHeader({ ...header, columns, hasZ: spool.hasZ }));
  const batch = new OutputBatch(out);
  const encoder = new FlatGeobufFeatureEncoder(columns, names);
  for await (const feature of spool.replayTexts()) {
    if ('members' in feature) {
      // A point is read from its text; any other geometry is parsed alone, not the whole feature.
      const point = pointCoordinates(feature.bytes, feature.geometryStart, feature.geometryEnd);
      const geometry = point !== undefined ? pointGeometry(point, spool.hasZ)
        : parsedGeometry(JSON.parse(feature.bytes.toString('utf8', feature.geometryStart, feature.geometryEnd)) as Geometry | null, spool.hasZ);
      batch.add(encoder.encodeText(geometry, feature));
    } else {
      batch.add(encoder.encode(parsedGeometry(feature.geometry as Geometry | null, spool.hasZ), feature.id, feature.properties));
    }
    await batch.settle();
  }
  await batch.flush();
});
