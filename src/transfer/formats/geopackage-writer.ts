// Writes a GeoPackage (OGC 12-128r18) with better-sqlite3: the required tables, one feature layer with typed columns, GeoPackage geometries (header plus WKB) and an R-tree index as GDAL writes one.
import Database from 'better-sqlite3';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Geometry, WriterFactory } from '../transfer-feature.js';
import { put } from './output-stream.js';
import { Spool, spooledWriter } from './spool.js';
import type { ValueKind } from './column-kinds.js';
import { boundsOf, encodeWkb } from './wkb-writer.js';

/** The layer's table, its key and geometry column: fixed names, so that the R-tree's triggers below are plain text. */
const LAYER = 'features';
const KEY = 'fid';
const GEOMETRY = 'geom';
const RTREE = `rtree_${LAYER}_${GEOMETRY}`;

const SQL_TYPES: Record<ValueKind, string> = { boolean: 'BOOLEAN', integer: 'INTEGER', number: 'REAL', string: 'TEXT', json: 'TEXT' };

const WGS84 = 'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],'
  + 'PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]';

/** The core tables of the specification (section 1.1) and the R-tree extension's (F.3), as GDAL creates them. */
const SCHEMA = `
PRAGMA application_id = 1196444487;
PRAGMA user_version = 10200;
CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY, organization TEXT NOT NULL,
  organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT);
CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE,
  description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
  CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL,
  srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
  CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name), CONSTRAINT uk_gc_table_name UNIQUE (table_name),
  CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
  CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL, definition TEXT NOT NULL,
  scope TEXT NOT NULL, CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));
CREATE TABLE gpkg_data_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, name TEXT, title TEXT, description TEXT,
  mime_type TEXT, constraint_name TEXT, CONSTRAINT pk_gdc PRIMARY KEY (table_name, column_name),
  CONSTRAINT gdc_tn UNIQUE (table_name, name));
INSERT INTO gpkg_spatial_ref_sys VALUES
  ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system'),
  ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system'),
  ('WGS 84 geodetic', 4326, 'EPSG', 4326, '${WGS84}', 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
`;

/** Created after the rows are in (the index is filled in one statement): they keep it current when a GIS edits the file. */
const RTREE_TRIGGERS = `
CREATE TRIGGER ${RTREE}_insert AFTER INSERT ON ${LAYER} WHEN (new.${GEOMETRY} NOT NULL AND NOT ST_IsEmpty(NEW.${GEOMETRY}))
BEGIN INSERT OR REPLACE INTO ${RTREE} VALUES (NEW.${KEY}, ST_MinX(NEW.${GEOMETRY}), ST_MaxX(NEW.${GEOMETRY}), ST_MinY(NEW.${GEOMETRY}), ST_MaxY(NEW.${GEOMETRY})); END;
CREATE TRIGGER ${RTREE}_update1 AFTER UPDATE OF ${GEOMETRY} ON ${LAYER} WHEN OLD.${KEY} = NEW.${KEY} AND (NEW.${GEOMETRY} NOTNULL AND NOT ST_IsEmpty(NEW.${GEOMETRY}))
BEGIN INSERT OR REPLACE INTO ${RTREE} VALUES (NEW.${KEY}, ST_MinX(NEW.${GEOMETRY}), ST_MaxX(NEW.${GEOMETRY}), ST_MinY(NEW.${GEOMETRY}), ST_MaxY(NEW.${GEOMETRY})); END;
CREATE TRIGGER ${RTREE}_update2 AFTER UPDATE OF ${GEOMETRY} ON ${LAYER} WHEN OLD.${KEY} = NEW.${KEY} AND (NEW.${GEOMETRY} ISNULL OR ST_IsEmpty(NEW.${GEOMETRY}))
BEGIN DELETE FROM ${RTREE} WHERE id = OLD.${KEY}; END;
CREATE TRIGGER ${RTREE}_update3 AFTER UPDATE ON ${LAYER} WHEN OLD.${KEY} != NEW.${KEY} AND (NEW.${GEOMETRY} NOTNULL AND NOT ST_IsEmpty(NEW.${GEOMETRY}))
BEGIN DELETE FROM ${RTREE} WHERE id = OLD.${KEY}; INSERT OR REPLACE INTO ${RTREE} VALUES (NEW.${KEY}, ST_MinX(NEW.${GEOMETRY}), ST_MaxX(NEW.${GEOMETRY}), ST_MinY(NEW.${GEOMETRY}), ST_MaxY(NEW.${GEOMETRY})); END;
CREATE TRIGGER ${RTREE}_update4 AFTER UPDATE ON ${LAYER} WHEN OLD.${KEY} != NEW.${KEY} AND (NEW.${GEOMETRY} ISNULL OR ST_IsEmpty(NEW.${GEOMETRY}))
BEGIN DELETE FROM ${RTREE} WHERE id IN (OLD.${KEY}, NEW.${KEY}); END;
CREATE TRIGGER ${RTREE}_delete AFTER DELETE ON ${LAYER} WHEN old.${GEOMETRY} NOT NULL
BEGIN DELETE FROM ${RTREE} WHERE id = OLD.${KEY}; END;
`;

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The GeoPackage binary of a geometry: "GP", version 0, flags (little-endian, envelope kind, empty), SRS id, envelope, WKB. */
export function encodeGeoPackageGeometry(geometry: Geometry, dims: 2 | 3): { blob: Uint8Array; bounds?: [number, number, number, number] } {
  const bounds = boundsOf(geometry);
  // Points carry no envelope (it is the point), as GDAL writes them.
  const envelope = bounds !== undefined && geometry.type !== 'Point';
  const wkb = encodeWkb(geometry, dims);
  const blob = new Uint8Array(8 + (envelope ? 32 : 0) + wkb.length);
  const view = new DataView(blob.buffer);
  blob.set([0x47, 0x50, 0, 0x01 | (envelope ? 0x02 : 0) | (bounds === undefined ? 0x10 : 0)]);
  view.setInt32(4, 4326, true);
  if (envelope) [bounds[0], bounds[2], bounds[1], bounds[3]].forEach((value, i) => view.setFloat64(8 + 8 * i, value, true));
  blob.set(wkb, blob.length - wkb.length);
  return { blob, bounds };
}

/** Property names as SQLite columns, which compare without case: a name taken already (or by fid/geom) gets a suffix. */
function columnNames(names: string[]): string[] {
  const taken = new Set([KEY, GEOMETRY]);
  return names.map((name) => {
    let column = name;
    for (let n = 2; taken.has(column.toLowerCase()); n++) column = `${name}_${n}`;
    taken.add(column.toLowerCase());
    return column;
  });
}

export const writeGeoPackage: WriterFactory = (out) => spooledWriter(async (spool) => {
  const dir = mkdtempSync(join(tmpdir(), 'spatial-hub-gpkg-'));
  try {
    const file = join(dir, 'export.gpkg');
    await fill(file, spool);
    for await (const chunk of createReadStream(file)) await put(out, chunk as Buffer);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

/** Fills the file from the spool in transactions of 10,000 rows, then the R-tree, the layer's extent and the triggers. */
async function fill(file: string, spool: Spool): Promise<void> {
  const db = new Database(file);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.exec(SCHEMA);
    const names = [...spool.columns.keys()].filter((name) => name !== 'id');
    const columns = columnNames(names);
    const kinds = names.map((name) => spool.columns.get(name) ?? 'string');
    const types = [...spool.geometryTypes].filter((type) => type !== 'null');
    const dims = spool.hasZ ? 3 : 2;
    db.exec(`CREATE TABLE ${LAYER} (${KEY} INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, ${GEOMETRY} ${types.length === 1 ? types[0].toUpperCase() : 'GEOMETRY'}, "id" TEXT`
      + columns.map((column, i) => `, ${quote(column)} ${SQL_TYPES[kinds[i]]}`).join('') + ')');
    db.exec(`CREATE VIRTUAL TABLE ${RTREE} USING rtree(id, minx, maxx, miny, maxy)`);
    const insert = db.prepare(`INSERT INTO ${LAYER} (${GEOMETRY}, "id"${columns.map((column) => `, ${quote(column)}`).join('')}) VALUES (?, ?${', ?'.repeat(columns.length)})`);
    const index = db.prepare(`INSERT INTO ${RTREE} VALUES (?, ?, ?, ?, ?)`);
    const extent: [number, number, number, number] = [Infinity, Infinity, -Infinity, -Infinity];
    const value = (raw: unknown, kind: ValueKind): unknown => {
      if (raw === null || raw === undefined) return null;
      if (kind === 'json') return JSON.stringify(raw);
      if (kind === 'boolean') return raw ? 1 : 0;
      return raw;
    };
    let batch: unknown[][] = [];
    const flush = db.transaction((rows: unknown[][]) => {
      for (const row of rows) {
        const { lastInsertRowid } = insert.run(row.slice(0, -1));
        const bounds = row[row.length - 1] as [number, number, number, number] | undefined;
        if (bounds) index.run(lastInsertRowid, bounds[0], bounds[2], bounds[1], bounds[3]);
      }
    });
    for await (const feature of spool.replay()) {
      const encoded = feature.geometry === null ? undefined : encodeGeoPackageGeometry(feature.geometry, dims);
      const bounds = encoded?.bounds;
      if (bounds) {
        extent[0] = Math.min(extent[0], bounds[0]);
        extent[1] = Math.min(extent[1], bounds[1]);
        extent[2] = Math.max(extent[2], bounds[2]);
        extent[3] = Math.max(extent[3], bounds[3]);
      }
      batch.push([encoded?.blob ?? null, feature.id ?? null, ...names.map((name, i) => value(feature.properties[name], kinds[i])), bounds]);
      if (batch.length === 10_000) {
        flush(batch);
        batch = [];
      }
    }
    flush(batch);
    const known = extent[0] !== Infinity;
    db.prepare('INSERT INTO gpkg_contents (table_name, data_type, identifier, min_x, min_y, max_x, max_y, srs_id) VALUES (?, ?, ?, ?, ?, ?, ?, 4326)')
      .run(LAYER, 'features', LAYER, ...(known ? extent : [null, null, null, null]));
    db.prepare('INSERT INTO gpkg_geometry_columns VALUES (?, ?, ?, 4326, ?, 0)').run(LAYER, GEOMETRY, types.length === 1 ? types[0].toUpperCase() : 'GEOMETRY', dims === 3 ? 1 : 0);
    db.prepare('INSERT INTO gpkg_extensions VALUES (?, ?, ?, ?, ?)').run(LAYER, GEOMETRY, 'gpkg_rtree_index', 'http://www.geopackage.org/spec120/#extension_rtree', 'write-only');
    // Objects and lists are JSON text; the data column's MIME type tells GDAL (and our reader) to read them as JSON again.
    const json = columns.filter((_, i) => kinds[i] === 'json');
    if (json.length > 0) {
      db.prepare('INSERT INTO gpkg_extensions VALUES (NULL, NULL, ?, ?, ?)').run('gpkg_schema', 'http://www.geopackage.org/spec/#extension_schema', 'read-write');
      const describe = db.prepare('INSERT INTO gpkg_data_columns (table_name, column_name, name, mime_type) VALUES (?, ?, ?, ?)');
      for (const column of json) describe.run(LAYER, column, column, 'application/json');
    }
    db.exec(RTREE_TRIGGERS);
  } finally {
    db.close();
  }
}
