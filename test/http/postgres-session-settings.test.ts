// PostgreSQL only: the hub's pooled sessions run without JIT compilation and with 16MB of work_mem, and an operator's `options` in the connection URL replace that.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { collection, point } from '../helpers/features.js';
import { call, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster.js';

const skip = BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run (see HUB_TEST_BACKENDS)';

describe('PostgreSQL session settings (postgres)', { skip }, () => {
  let cluster: PostgresCluster;
  /** The test's own session, itself without JIT, so that only the hubs' statements can show compiled functions. */
  let db: pg.Client;
  const hubs: HubProcess[] = [];

  before(async () => {
    // Every plan costs more than 0: with JIT on, each statement of the hub would be compiled.
    cluster = await startPostgresCluster({ settings: { shared_preload_libraries: 'pg_stat_statements', jit_above_cost: '0' } });
    db = new pg.Client({ connectionString: cluster.url, options: '-c jit=off' });
    await db.connect();
    await db.query('CREATE EXTENSION pg_stat_statements');
  });
  after(async () => {
    for (const hub of hubs) await hub.stop();
    await db.end();
    await cluster.destroy();
  });

  /** The hub's statements since the last reset: how many ran, and the functions JIT compiled for them. */
  async function compiled(): Promise<{ calls: number; functions: number }> {
    const { rows: [row] } = await db.query<{ calls: string | null; functions: string | null }>(
      "SELECT sum(calls) AS calls, sum(jit_functions) AS functions FROM pg_stat_statements WHERE query LIKE '%features%'");
    return { calls: Number(row.calls ?? 0), functions: Number(row.functions ?? 0) };
  }

  async function readThrough(hub: HubProcess, space: string): Promise<{ calls: number; functions: number }> {
    await db.query('SELECT pg_stat_statements_reset()');
    const response = await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=-1&south=-1&east=3&north=3`);
    assert.equal(response.status, 200, response.text);
    assert.equal(response.body.features?.length, 20);
    assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: JSON.stringify(collection(point('w1', { a: 1 }, [50, 50]))) })).status, 200);
    return compiled();
  }

  test('the hub reads and writes without JIT; a URL with its own options (-c jit=on) gets the server default back', async (t) => {
    // pg_jit_available() is false while the asking session has jit off.
    await db.query('SET jit = on');
    const { rows: [{ available }] } = await db.query<{ available: boolean }>('SELECT pg_jit_available() AS available');
    await db.query('SET jit = off');
    if (!available) {
      t.skip('this PostgreSQL has no JIT (llvmjit is not installed)');
      return;
    }
    const hub = await startHub({ backend: 'postgres', cluster });
    hubs.push(hub);
    const space = await createSpaceWith(hub, Array.from({ length: 20 }, (_, i) => point(`p${i}`, { n: i }, [i / 10, i / 10])));
    const own = await readThrough(hub, space);
    assert.ok(own.calls > 0, 'the hub ran statements on the features table');
    assert.equal(own.functions, 0, 'no statement of the hub was JIT-compiled');

    const withJit = await startHub({ backend: 'postgres', cluster, storage: `${cluster.url}?options=-c%20jit%3Don` });
    hubs.push(withJit);
    const operators = await readThrough(withJit, space);
    assert.ok(operators.functions > 0, `with the operator's options the server's JIT compiled the hub's statements (${operators.calls} statements)`);
  });

  /** Blocks that the hub's statements on the features table wrote to temporary files since the last reset (sorts that spilled). */
  async function spilled(): Promise<number> {
    const { rows: [row] } = await db.query<{ blocks: string | null }>(
      "SELECT sum(temp_blks_written) AS blocks FROM pg_stat_statements WHERE query LIKE '%features%'");
    return Number(row.blocks ?? 0);
  }

  test('a 10,000-feature page is sorted in memory (work_mem 16MB); with the operator\'s own options it spills at the server\'s 4MB', async () => {
    const hub = await startHub({ backend: 'postgres', cluster });
    hubs.push(hub);
    // About 600 bytes a feature: the page's 10,000 take about 6 MB to sort.
    const space = await createSpaceWith(hub, Array.from({ length: 10_500 }, (_, i) => point(`s${i}`, { n: i, text: 'x'.repeat(400) },
      [(i % 100) / 100, Math.floor(i / 100) / 100])));
    const readBox = async (reader: HubProcess) => {
      await db.query('SELECT pg_stat_statements_reset()');
      const response = await call(reader, 'GET', `/hub/spaces/${space}/bbox?west=-1&south=-1&east=2&north=2&limit=10000`);
      assert.equal(response.status, 200, response.text.slice(0, 300));
      assert.equal(response.body.features?.length, 10_000);
      return spilled();
    };
    assert.equal(await readBox(hub), 0, 'the hub\'s sessions sorted the page in memory');
    const withOwnOptions = await startHub({ backend: 'postgres', cluster, storage: `${cluster.url}?options=-c%20jit%3Doff` });
    hubs.push(withOwnOptions);
    assert.ok(await readBox(withOwnOptions) > 0, 'with the server\'s work_mem the page\'s sort spilled to disk');
  });
});
