// Reads a GeoPackage layer with better-sqlite3 (a GeoPackage is an SQLite file): the gpkg_geometry_columns table names the layer, each geometry is a GeoPackage header plus WKB.
import Database from 'better-sqlite3';
import { type FormatReader, type Geometry, InputError, tableFeature } from '../transfer-feature.js';
import { decodeWkb } from './wkb.js';

/** Size of the envelope after the 8-byte header, by the envelope indicator (bits 1-3 of the flags). */
const ENVELOPE_BYTES = [0, 32, 48, 48, 64];

export function decodeGeoPackageGeometry(blob: Uint8Array): Geometry | null {
  if (blob.byteLength < 8 || blob[0] !== 0x47 || blob[1] !== 0x50) throw new Error('not a GeoPackage geometry (no "GP" header)');
  const flags = blob[3];
  // Bit 5: an extended geometry type; bit 4: empty; bits 1-3: the envelope's kind (the specification's section 2.1.3).
  if (flags & 0x20) throw new Error('extended GeoPackage geometries are not supported');
  const envelope = ENVELOPE_BYTES[(flags >> 1) & 0x07];
  if (envelope === undefined) throw new Error('invalid GeoPackage envelope indicator');
  // An empty geometry (bit 4) is in the WKB too: an empty list, or a point of NaN, which decodeWkb reads as empty.
  return decodeWkb(blob, 8 + envelope);
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** Columns the schema extension marks as JSON (GDAL's JSON subtype, our writer's objects and lists): read back as values. */
function jsonColumns(db: Database.Database, table: string): Set<string> {
  try {
    const rows = db.prepare("SELECT column_name FROM gpkg_data_columns WHERE table_name = ? AND mime_type = 'application/json'").all(table) as Array<{ column_name: string }>;
    return new Set(rows.map((row) => row.column_name));
  } catch {
    return new Set();
  }
}

export const readGeoPackage: FormatReader = async function* (source, options) {
  if (source.path === undefined) throw new InputError('a GeoPackage is read from a file, not from stdin', 'the input');
  let db: Database.Database;
  try {
    db = new Database(source.path, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new InputError(`cannot open the GeoPackage (${(error as Error).message})`, 'the file');
  }
  try {
    let layers: Array<{ table_name: string; column_name: string }>;
    try {
      layers = db.prepare('SELECT table_name, column_name FROM gpkg_geometry_columns ORDER BY table_name').all() as typeof layers;
    } catch {
      throw new InputError('not a GeoPackage (no gpkg_geometry_columns table)', 'the file');
    }
    const layer = options.layer === undefined ? layers[0] : layers.find((candidate) => candidate.table_name === options.layer);
    if (!layer) throw new InputError(options.layer === undefined ? 'the GeoPackage has no feature layer' : `the GeoPackage has no layer "${options.layer}" (it has: ${layers.map((l) => l.table_name).join(', ')})`, 'the file');
    const columns = db.pragma(`table_info(${quote(layer.table_name)})`) as Array<{ name: string; type: string; pk: number }>;
    const key = columns.find((column) => column.pk === 1)?.name;
    const json = jsonColumns(db, layer.table_name);
    const valueOf = (column: { name: string; type: string }, value: unknown): unknown => {
      if (value === null || value === undefined) return null;
      if (column.type.toUpperCase() === 'BOOLEAN') return value === 1 || value === 1n;
      if (json.has(column.name) && typeof value === 'string') {
        try {
          return JSON.parse(value) as unknown;
        } catch {
          return value;
        }
      }
      return value;
    };
    let index = 0;
    for (const row of db.prepare(`SELECT * FROM ${quote(layer.table_name)}${key ? ` ORDER BY ${quote(key)}` : ''}`).iterate() as Iterable<Record<string, unknown>>) {
      const position = `feature ${index++}`;
      const blob = row[layer.column_name];
      let geometry: Geometry | null;
      try {
        geometry = blob === null || blob === undefined ? null : decodeGeoPackageGeometry(blob as Uint8Array);
      } catch (error) {
        yield { error: (error as Error).message, position };
        continue;
      }
      const properties: Record<string, unknown> = {};
      for (const column of columns) if (column.name !== layer.column_name && column.name !== key) properties[column.name] = valueOf(column, row[column.name]);
      const feature = tableFeature(geometry, properties, options.idProperty);
      // Without an id column the layer's primary key (the fid QGIS shows) is the id.
      if (feature.id === undefined && key !== undefined) feature.id = String(row[key]);
      yield { feature, position };
    }
  } finally {
    db.close();
  }
};
