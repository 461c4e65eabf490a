// Loads the plain floors' tables: the features the hub was given, in the plainest layout of each engine, without the hub's code.
import Database from 'better-sqlite3';
import pg from 'pg';
import type { BBox } from '../src/geo/bbox.js';
import type { StorageSpec } from './engines.js';
import { plainName } from './plain-floor.js';

/** A feature as the hub stores and returns it: its text, and its bounds for SQLite's R*Tree. */
export interface PlainFeature {
  id: string;
  json: string;
  bbox: BBox | null;
}

export interface PlainTable {
  add(features: PlainFeature[]): Promise<void>;
  /** Builds what a bulk load builds last (PostgreSQL's GiST index) and gathers the planner's statistics. */
  finish(): Promise<void>;
}

/**
 * PostgreSQL: `(id text primary key, geom geometry(Geometry,4326), properties jsonb)`, filled by multi-row INSERTs
 * of the parsed features. Geometries are stored 2D, as a plain `Geometry` column takes them.
 */
async function postgresTable(url: string, name: string): Promise<PlainTable> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`DROP TABLE IF EXISTS ${name}`);
  await client.query(`CREATE TABLE ${name} (id text PRIMARY KEY, geom geometry(Geometry, 4326), properties jsonb)`);
  return {
    async add(features) {
      const parsed = features.map((feature) => JSON.parse(feature.json) as { geometry: unknown; properties: unknown });
      await client.query(
        `INSERT INTO ${name} (id, geom, properties)
         SELECT u.id, ST_Force2D(ST_GeomFromGeoJSON(u.geometry)), u.properties::jsonb
           FROM unnest($1::text[], $2::text[], $3::text[]) AS u(id, geometry, properties)`,
        [features.map((feature) => feature.id), parsed.map((feature) => JSON.stringify(feature.geometry)), parsed.map((feature) => JSON.stringify(feature.properties))]);
    },
    async finish() {
      try {
        await client.query(`CREATE INDEX ON ${name} USING gist (geom)`);
        await client.query(`VACUUM (ANALYZE) ${name}`);
      } finally {
        await client.end();
      }
    },
  };
}

/** SQLite: `(id text primary key, geojson text)` and an R*Tree of the bounds keyed by the row's rowid. */
function sqliteTable(path: string, name: string): PlainTable {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.exec(`DROP TABLE IF EXISTS ${name}; DROP TABLE IF EXISTS ${name}_box;
    CREATE TABLE ${name} (id TEXT PRIMARY KEY, geojson TEXT NOT NULL);
    CREATE VIRTUAL TABLE ${name}_box USING rtree(id, min_x, max_x, min_y, max_y);`);
  const insert = db.prepare<[string, string]>(`INSERT INTO ${name} (id, geojson) VALUES (?, ?)`);
  const insertBox = db.prepare<[number | bigint, number, number, number, number]>(`INSERT INTO ${name}_box VALUES (?, ?, ?, ?, ?)`);
  const addAll = db.transaction((features: PlainFeature[]) => {
    for (const feature of features) {
      const { lastInsertRowid } = insert.run(feature.id, feature.json);
      if (feature.bbox) {
        const [west, south, east, north] = feature.bbox;
        insertBox.run(lastInsertRowid, west, east, south, north);
      }
    }
  });
  return {
    async add(features) {
      addAll(features);
    },
    async finish() {
      db.exec('ANALYZE');
      db.close();
    },
  };
}

/** A new, empty plain table `name` (replacing one of that name) in the database `spec` names. */
export async function plainTable(spec: StorageSpec, name: string): Promise<PlainTable> {
  return spec.engine === 'postgres' ? postgresTable(spec.url, plainName(name)) : sqliteTable(spec.path, plainName(name));
}
