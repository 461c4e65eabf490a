// A keyset page of a read at an old version reads about a page of rows from each part (current rows, superseded states), not the whole space after its handle (docs/adr-002-history.md, "Reading a large space at an old version").
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { BACKENDS } from '../helpers/backends.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { pageAtVersion } from '../../src/storage/postgres/feature-store.js';
import type { SpaceKey, Storage } from '../../src/storage/storage.js';
import { spaceWith, type TestFeature } from './storage-fixture.js';

const FEATURES = 6_000;
const PAGE = 100;

const points = (count: number): TestFeature[] => Array.from({ length: count }, (_, n) => ({
  id: `p${n}`, geometry: { type: 'Point', coordinates: [n % 180, n % 90] }, properties: { n },
}));

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** The rows each table's scans produced or filtered out, over all loops and workers. */
function rowsRead(node: PlanNode, into = new Map<string, number>()): Map<string, number> {
  const table = node['Relation Name'];
  if (table) into.set(table, (into.get(table) ?? 0) + node['Actual Rows'] * node['Actual Loops'] + (node['Rows Removed by Filter'] ?? 0) * node['Actual Loops']);
  for (const child of node.Plans ?? []) rowsRead(child, into);
  return into;
}

describe('PostgreSQL: a page of a read at an old version', { skip: !BACKENDS.includes('postgres') }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let storage: Storage;
  let sql: pg.Client;
  let space: SpaceKey;

  before(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.url);
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    space = await spaceWith(storage, 'large', points(FEATURES));
    // Every tenth row superseded at version 5: a read at version 3 takes these states instead.
    await sql.query(`INSERT INTO feature_history (sid, version_to, seq, id, version_from, feature, properties, geom, geometry_type, tags)
                     SELECT sid, 5, seq, id, version, feature, properties, geom, geometry_type, tags FROM features WHERE sid = $1 AND seq % 10 = 0`, [space.sid]);
    await sql.query('ANALYZE features, feature_history');
  });
  after(async () => {
    await sql?.end();
    await storage?.close();
    await database?.remove();
  });

  test('reads about a page from each part, wherever the handle is', async () => {
    const { rows: [{ first }] } = await sql.query<{ first: string }>('SELECT min(seq) AS first FROM features WHERE sid = $1', [space.sid]);
    for (const handle of [0, Number(first) + FEATURES / 2]) {
      const text = `SELECT count(*) FROM (${pageAtVersion('f.seq, f.feature', 'true', '$4')}) p`;
      const { rows } = await sql.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>({ text: `EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values: [space.sid, handle, PAGE, 3] });
      const read = rowsRead(rows[0]['QUERY PLAN'][0].Plan);
      assert.ok((read.get('features') ?? 0) <= 2 * PAGE, `after ${handle}: ${read.get('features')} rows of features read for a page of ${PAGE}`);
      assert.ok((read.get('feature_history') ?? 0) <= FEATURES / 10, `after ${handle}: ${read.get('feature_history')} superseded states read`);
    }
  });
});
