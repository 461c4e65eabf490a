// Lookups of features by id in one space (the write's locking lookup, a merge's current rows, a GET of one feature) probe the (sid, id) index, also while the statistics know nothing of the space (issue 22: a new space's bulk load read the whole space per id).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { BACKENDS } from '../helpers/backends.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { CURRENT_OF, LOCK_STORED, LOCK_VERSION_AND_STORED } from '../../src/storage/postgres/feature-store.js';
import { FEATURE_BY_ID } from '../../src/storage/postgres/space-store.js';
import type { SpaceKey, Storage } from '../../src/storage/storage.js';
import { spaceWith, type TestFeature } from './storage-fixture.js';

/** 980 characters that pglz cannot shorten (the same for every id): an index entry keeps them whole. */
const PREFIX = (() => {
  let seed = 7;
  return Array.from({ length: 980 }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return 'abcdefghijklmnopqrstuvwxyz0123456789'[seed % 36];
  }).join('');
})();

/**
 * Ids of the longest kind the hub takes (1,000 characters) that differ only at their end, so that neither compression
 * nor the index's shortened inner keys make them small: their index is then many times the primary key's (sid, seq),
 * and a probe of it costs the planner more than a scan of the primary key over a space it believes to hold one row.
 */
const longId = (space: string, n: number) => `${PREFIX}-${space}-${String(n).padStart(6, '0')}`;
const points = (space: string, count: number): TestFeature[] => Array.from({ length: count }, (_, n) => ({
  id: longId(space, n), geometry: { type: 'Point', coordinates: [n % 180, n % 90] }, properties: { n },
}));

describe('PostgreSQL: lookups by id in a space the statistics do not know', { skip: !BACKENDS.includes('postgres') }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let storage: Storage;
  let sql: pg.Client;
  let young: SpaceKey;

  before(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.url);
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    // The statistics see one space only; a space made after them is estimated at one row, whatever it holds.
    await spaceWith(storage, 'old', points('old', 2_000));
    await sql.query('ANALYZE features');
    young = await spaceWith(storage, 'young', points('young', 1_000));
  });
  after(async () => {
    await sql?.end();
    await storage?.close();
    await database?.remove();
  });

  /** The indexes the statement's plan reads features through, for these parameters (a custom plan, as a write's first executions get). */
  const indexesOf = async (text: string, values: unknown[]): Promise<string[]> => {
    const { rows } = await sql.query<{ 'QUERY PLAN': unknown }>({ text: `EXPLAIN (FORMAT JSON) ${text}`, values });
    return [...JSON.stringify(rows[0]['QUERY PLAN']).matchAll(/"Index Name":"([^"]+)"/g)].map((found) => found[1]);
  };

  const ids = Array.from({ length: 1_000 }, (_, n) => longId('young', n));
  const statements = [
    ['the lock without history', LOCK_STORED.text, () => [young.sid, ids]],
    ['the lock with the version lock', LOCK_VERSION_AND_STORED.text, () => [young.sid, ids]],
    ['the current rows of a merge', CURRENT_OF.text, () => [young.sid, ids.slice(0, 3)]],
    ['a GET of one feature', FEATURE_BY_ID.text, () => [young.sid, ids[5]]],
  ] as const;
  for (const [name, text, values] of statements) {
    test(`${name}: features_by_id, never a scan of the space by the primary key`, async () => {
      const indexes = await indexesOf(text, [...values()]);
      assert.ok(indexes.includes('features_by_id'), `planned through ${indexes.join(', ')}`);
      assert.ok(!indexes.includes('features_pkey'), `planned through ${indexes.join(', ')}`);
    });
  }
});
