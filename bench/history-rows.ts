// The history section's direct access to the hub's history tables: building a long history fast, and counting what pruning left.
import Database from 'better-sqlite3';
import pg from 'pg';
import type { SpaceKey } from '../src/storage/storage.js';
import { type StorageSpec, openBulkStorage, spaceKey } from './engines.js';
import { fillHistory } from './history-fill.js';

/** Features a long history rewrites round-robin: one per version. */
export const HISTORY_POOL = 1000;

/**
 * Gives a space keeping history (returned: its storage key) `versions` versions of one feature each. SQLite writes them through the storage's
 * write path (8,000 versions/s without fsync). PostgreSQL writes the first pass that way too, but a versioned write
 * there is nine statements (about 200/s), so the later versions are made in SQL from the stored features: the same rows
 * the write path makes (each version's superseded state, its version record, the features' last states).
 */
export async function buildHistory(spec: StorageSpec, spaceId: string, versions: number): Promise<SpaceKey> {
  const storage = await openBulkStorage(spec);
  let space: SpaceKey;
  try {
    space = await spaceKey(storage, spaceId);
    await fillHistory(storage, space, spaceId, spec.engine === 'sqlite' ? versions : Math.min(versions, HISTORY_POOL), 1, HISTORY_POOL);
  } finally {
    await storage.close();
  }
  if (spec.engine === 'sqlite' || versions <= HISTORY_POOL) return space;
  const client = new pg.Client({ connectionString: spec.url });
  await client.connect();
  try {
    const withVersion = (text: string, version: string) => `regexp_replace(${text}, '"version":[0-9]+', '"version":' || (${version}))`;
    const step = 200_000;
    for (let from = HISTORY_POOL; from < versions; from += step) {
      const to = Math.min(from + step, versions) - 1;
      await client.query('BEGIN');
      // Version g rewrites feature g mod pool, whose state before was written at g - pool.
      await client.query(
        `INSERT INTO feature_history (sid, version_to, seq, id, version_from, feature, properties, geom, geometry_type, tags)
         SELECT f.sid, g, f.seq, f.id, g - $4, ${withVersion('f.feature', 'g - $4')}, f.properties, f.geom, f.geometry_type, f.tags
           FROM generate_series($2::bigint, $3::bigint) AS g
           JOIN features f ON f.sid = $1 AND f.id = 'sp-' || (g % $4)`,
        [space.sid, from, to, HISTORY_POOL]);
      await client.query(`INSERT INTO space_versions (sid, version, author, created_at) SELECT $1, g, 'bench', $4 FROM generate_series($2::bigint, $3::bigint) AS g`,
        [space.sid, from, to, Date.now()]);
      await client.query('COMMIT');
    }
    const last = versions - 1;
    await client.query(
      `UPDATE features SET version = v, feature = ${withVersion('feature', 'v')}
         FROM (SELECT id AS vid, (k + $3::bigint * (($2::bigint - k) / $3::bigint)) AS v FROM (SELECT id, substr(id, 4)::bigint AS k FROM features WHERE sid = $1) AS ks) AS last
        WHERE sid = $1 AND id = vid`,
      [space.sid, last, HISTORY_POOL]);
    await client.query('UPDATE space_contents SET version = $2 WHERE sid = $1', [space.sid, last]);
    await client.query('ANALYZE feature_history');
  } finally {
    await client.end();
  }
  return space;
}

/**
 * Resolves once the hub's background pass has entered every superseded state of the space in SQLite's history R*Tree
 * (history-store.ts): a history built here, beside the hub, is entered all at once, where the hub's own writes have it
 * entered a few at a time, so timing anything before that timed the pass too. PostgreSQL indexes with the write.
 */
export async function historyIndexed(spec: StorageSpec, space: SpaceKey, timeoutMs: number): Promise<void> {
  if (spec.engine !== 'sqlite') return;
  const db = new Database(spec.path, { readonly: true });
  try {
    const pending = db.prepare(`SELECT count(*) AS n FROM spaces s CROSS JOIN feature_history f
      ON f.sid = s.sid AND (f.version_to, f.seq) > (s.history_indexed_version, s.history_indexed_seq) WHERE s.sid = ?`);
    for (const deadline = performance.now() + timeoutMs; (pending.get(space.sid) as { n: number }).n > 0;) {
      if (performance.now() > deadline) throw new Error(`history: the hub did not index the history of space ${space.sid} in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    db.close();
  }
}

/** History rows of a space: what pruning has yet to delete. */
export async function historyRows(spec: StorageSpec, space: SpaceKey): Promise<number> {
  if (spec.engine === 'sqlite') {
    const db = new Database(spec.path, { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM feature_history WHERE sid = ?').get(space.sid) as { n: number }).n;
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: spec.url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM feature_history WHERE sid = $1', [space.sid])).rows[0].n);
  } finally {
    await client.end();
  }
}
