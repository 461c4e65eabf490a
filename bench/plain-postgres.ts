// The plain PostgreSQL floor: the obvious query on (id, geom, properties jsonb) through pg, the answer built in SQL and sent as text.
import pg from 'pg';
import type { StorageSpec } from './engines.js';
import { type PlainAnswer, type PlainFloor, plainName, pageWalk, timedReads } from './plain-floor.js';
import { rotation } from './measure.js';
import { warmPool } from './warm-pools.js';

const FEATURE = `json_build_object('type', 'Feature', 'id', t.id, 'geometry', ST_AsGeoJSON(t.geom)::json, 'properties', t.properties)`;

/**
 * The rows of `t` as one FeatureCollection text. json_agg takes them in the order of a sorted subquery, as the
 * PostgreSQL manual describes for aggregates, so a page needs no second sort.
 */
const COLLECTION = `json_build_object('type', 'FeatureCollection', 'features', coalesce(json_agg(${FEATURE}), '[]'))::text`;

/**
 * The floor's sessions turn off JIT compilation and parallel workers. The server's defaults would use both for a
 * large box, as its row estimate there is right (the hub's is about 100 times too low): compiling took 40 ms of a
 * 10,000-feature query, and at 16 connections on two cores a parallel worker finds no idle core, it only adds its
 * start-up and the hand-over of the rows. A floor should be the least the query costs, not the most.
 */
const SESSION = '-c jit=off -c max_parallel_workers_per_gather=0';

/** Runs `work` on the floor's warm pool of `size` connections (warm-pools.ts). */
async function withPool<T>(url: string, size: number, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  return work(await warmPool(url, size, SESSION));
}

/** A collection's text and row count from a query whose first two columns are those. */
async function collection(pool: pg.Pool, text: string, values: unknown[]): Promise<PlainAnswer & { row: unknown[] }> {
  const { rows: [row] } = await pool.query<unknown[]>({ text, values, rowMode: 'array' });
  return { features: Number(row[1]), bytes: (row[0] as string).length, row };
}

export const plainPostgres: PlainFloor = {
  getById: ({ spec, table, ids, seconds, concurrency }, meter) => withPool(urlOf(spec), concurrency, (pool) => {
    const next = rotation(ids);
    // Prepared once per connection, as an application prepares its by-key lookup.
    const select = { name: 'plain_by_id', text: `SELECT ${FEATURE}::text FROM ${plainName(table)} t WHERE t.id = $1`, rowMode: 'array' as const };
    return timedReads({ concurrency, seconds, meter, counting: 'requests' }, async () => {
      const { rows } = await pool.query<[string]>({ ...select, values: [next()] });
      if (rows.length !== 1) throw new Error('plain floor GET by id missed a feature');
      return { features: 1, bytes: rows[0][0].length };
    });
  }),

  iterate: ({ spec, table, limit, seconds, expected }, meter) => withPool(urlOf(spec), 1, (pool) => {
    const sql = `SELECT ${COLLECTION}, count(*)::int, max(t.id)
                   FROM (SELECT id, geom, properties FROM ${plainName(table)} WHERE id > $1 ORDER BY id LIMIT $2) t`;
    const page = pageWalk('', limit, expected, async (after) => {
      const answer = await collection(pool, sql, [after, limit]);
      return { ...answer, last: answer.row[2] as string };
    });
    return timedReads({ concurrency: 1, seconds, meter, counting: 'features' }, page);
  }),

  search: ({ spec, table, property, above, limit, seconds }, meter) => withPool(urlOf(spec), 1, (pool) => {
    const sql = `SELECT ${COLLECTION}, count(*)::int
                   FROM (SELECT id, geom, properties FROM ${plainName(table)} WHERE (properties ->> $1)::numeric > $2 LIMIT $3) t`;
    return timedReads({ concurrency: 1, seconds, meter, counting: 'features' }, () => collection(pool, sql, [property, above, limit]));
  }),

  spatial: ({ spec, table, reads, seconds, concurrency }, meter) => withPool(urlOf(spec), concurrency, (pool) => {
    const name = plainName(table);
    const box = `SELECT ${COLLECTION}, count(*)::int
                   FROM (SELECT id, geom, properties FROM ${name} WHERE ST_Intersects(geom, ST_MakeEnvelope($1, $2, $3, $4, 4326)) LIMIT $5) t`;
    const tile = `SELECT ST_AsMVT(t, $4, 4096, 'geom'), count(*)::int FROM (
                    SELECT id, properties, ST_AsMVTGeom(ST_Transform(geom, 3857), ST_TileEnvelope($1, $2, $3), 4096, 0, true) AS geom
                      FROM ${name} WHERE geom && ST_Transform(ST_TileEnvelope($1, $2, $3), 4326) LIMIT $5) t`;
    let next = 0;
    return timedReads({ concurrency, seconds, meter, counting: 'requests' }, async () => {
      const read = reads[next++ % reads.length];
      if (!read.tile) return collection(pool, box, [...read.box, read.limit]);
      const { z, x, y, layer } = read.tile;
      const { rows: [row] } = await pool.query<[Buffer | null, number]>({ text: tile, values: [z, x, y, layer, read.limit], rowMode: 'array' });
      return { features: row[1], bytes: row[0]?.length ?? 0 };
    });
  }),
};

function urlOf(spec: StorageSpec): string {
  if (spec.engine !== 'postgres') throw new Error('the plain PostgreSQL floor needs a PostgreSQL database');
  return spec.url;
}
