// The FlatGeobuf header: as the library's buildHeader, plus the hasZ flag it leaves out (without it readers drop the third coordinate).
import * as flatbuffers from 'flatbuffers';
import type { ColumnMeta } from 'flatgeobuf/lib/mjs/column-meta.js';
import { Column } from 'flatgeobuf/lib/mjs/flat-geobuf/column.js';
import { Crs } from 'flatgeobuf/lib/mjs/flat-geobuf/crs.js';
import type { GeometryType } from 'flatgeobuf/lib/mjs/flat-geobuf/geometry-type.js';
import { Header } from 'flatgeobuf/lib/mjs/flat-geobuf/header.js';

export function buildHeader(options: { geometryType: GeometryType; hasZ: boolean; columns: ColumnMeta[]; featuresCount: number }): Uint8Array {
  const builder = new flatbuffers.Builder();
  const columns = Header.createColumnsVector(builder, options.columns.map((column) => {
    const name = builder.createString(column.name);
    Column.startColumn(builder);
    Column.addName(builder, name);
    Column.addType(builder, column.type);
    return Column.endColumn(builder);
  }));
  const name = builder.createString('features');
  Crs.startCrs(builder);
  Crs.addCode(builder, 4326);
  const crs = Crs.endCrs(builder);
  Header.startHeader(builder);
  Header.addCrs(builder, crs);
  Header.addFeaturesCount(builder, BigInt(options.featuresCount));
  Header.addGeometryType(builder, options.geometryType);
  Header.addHasZ(builder, options.hasZ);
  Header.addIndexNodeSize(builder, 0);
  Header.addColumns(builder, columns);
  Header.addName(builder, name);
  builder.finishSizePrefixed(Header.endHeader(builder));
  return builder.asUint8Array();
}
