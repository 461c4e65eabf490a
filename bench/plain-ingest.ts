// The ingest's plain floor: the same features loaded into a plain table whose indexes already exist, one transaction per batch (PostgreSQL: COPY).
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { pipeline } from 'node:stream/promises';
import type { Geometry } from '../src/geo/geometry.js';
import type { StorageSpec } from './engines.js';
import { plainName } from './plain-floor.js';
import { type PlainFeature, plainTable } from './plain-tables.js';

/** A feature for the floor: as the hub stores it, with its geometry as the client sent it (2D: the plain column holds one dimensionality). */
export interface IngestFeature extends PlainFeature {
  geometry: Geometry | null;
}

export interface PlainIngest {
  /** Prepares a batch outside the timed window; the returned function loads it in one transaction. */
  prepare(features: IngestFeature[]): () => Promise<void>;
  /** Gathers the planner's statistics and closes the connections. */
  finish(): Promise<void>;
}

/** COPY's text format: a backslash starts an escape. JSON texts hold no raw tab, newline or carriage return. */
const copyField = (text: string) => text.replaceAll('\\', '\\\\');

/**
 * PostgreSQL: `(id text primary key, geom geometry(Geometry,4326), properties jsonb)` with a GiST index on geom,
 * created before the load, and each batch one `COPY … FROM STDIN` of tab-separated text: the id, the GeoJSON
 * geometry (PostGIS reads GeoJSON as geometry input) and the properties. `lanes` connections load batches in parallel.
 */
async function postgresIngest(url: string, name: string, lanes: number): Promise<PlainIngest> {
  const pool = new pg.Pool({ connectionString: url, max: lanes });
  await pool.query(`DROP TABLE IF EXISTS ${name}`);
  await pool.query(`CREATE TABLE ${name} (id text PRIMARY KEY, geom geometry(Geometry, 4326), properties jsonb)`);
  await pool.query(`CREATE INDEX ON ${name} USING gist (geom)`);
  // Connections are opened before the clock starts: backend start-up is no load's work.
  const clients = await Promise.all(Array.from({ length: lanes }, () => pool.connect()));
  for (const client of clients) client.release();
  return {
    prepare(features) {
      const text = features.map((feature) => {
        const { properties } = JSON.parse(feature.json) as { properties: unknown };
        const geometry = feature.geometry ? copyField(JSON.stringify(feature.geometry)) : '\\N';
        return `${copyField(feature.id)}\t${geometry}\t${copyField(JSON.stringify(properties))}\n`;
      }).join('');
      return async () => {
        const client = await pool.connect();
        try {
          await pipeline([text], client.query(copyFrom(`COPY ${name} (id, geom, properties) FROM STDIN`)));
        } finally {
          client.release();
        }
      };
    },
    async finish() {
      try {
        await pool.query(`VACUUM (ANALYZE) ${name}`);
      } finally {
        await pool.end();
      }
    },
  };
}

/** A new, empty plain table `name` (replacing one of that name) for the ingest's floor, loaded from `lanes` connections on PostgreSQL. */
export async function plainIngest(spec: StorageSpec, name: string, lanes: number): Promise<PlainIngest> {
  if (spec.engine === 'postgres') return postgresIngest(spec.url, plainName(name), lanes);
  // SQLite's plain table has its R*Tree from the start and adds a batch as one transaction of prepared INSERTs.
  const table = await plainTable(spec, name);
  return { prepare: (features) => () => table.add(features), finish: () => table.finish() };
}
