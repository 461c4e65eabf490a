// Black-box tests of query deadlines (HUB_QUERY_TIMEOUT → 504) and of cancelling the query of a client that goes away.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { collection, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { metrics, sample } from '../helpers/metrics.js';

/** A statement that nothing cancels waits for the test's lock: the test then fails instead of hanging. */
const STUCK = 120_000;

/** Writes features `f0` … `f<count-1>` with `properties.n` = their number and a label of `labelLength` characters, in batches. */
async function fill(hub: HubProcess, space: string, count: number, labelLength = 40): Promise<void> {
  const batch = 10_000;
  for (let start = 0; start < count; start += batch) {
    const features = Array.from({ length: Math.min(batch, count - start) }, (_, i) => point(`f${start + i}`, { n: start + i, label: 'x'.repeat(labelLength) }));
    const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...features) });
    assert.equal(response.status, 200, response.text);
  }
}

function assertTimeout(response: TestResponse): void {
  assert.equal(response.status, 504, response.text);
  assert.equal(response.body.type, 'ErrorResponse');
  assert.equal(response.body.error, 'Timeout');
  assert.equal(response.body.code, 'storageTimeout');
  assert.equal(response.body.errorMessage, 'Connector timeout error.');
}

/** A read the test can abandon: resolves with the response once its status line arrived. */
function startRead(hub: HubProcess, path: string): { response: Promise<Response>; abort(): void } {
  const controller = new AbortController();
  const response = fetch(hub.url + path, {
    // Uncompressed, so that the first chunk of the body arrives as soon as the hub sends it.
    headers: { authorization: `Bearer ${hub.token}`, 'accept-encoding': 'identity' },
    signal: controller.signal,
  });
  response.catch(() => {});
  return { response, abort: () => controller.abort() };
}

/** How much `hub_http_requests_incomplete_total` with these labels grew between two scrapes of /metrics. */
function grown(before: string, after: string, labels: Record<string, string>): number {
  const name = 'hub_http_requests_incomplete_total';
  return (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
}

/** Polls `check` until it holds; fails after `seconds`, far beyond what the awaited effect needs. */
async function eventually(what: string, check: () => Promise<boolean>, seconds = 15): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (!(await check())) {
    if (Date.now() > until) assert.fail(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function assertServing(hub: HubProcess, space: string, features: number): Promise<void> {
  assert.equal((await call(hub, 'GET', '/hub')).status, 200);
  const all = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=100000`);
  assert.equal(all.status, 200, all.text);
  assert.equal(all.body.features?.length, features);
}

if (BACKENDS.includes('sqlite')) {
  describe('query deadlines and cancellation (sqlite)', () => {
    const FEATURES = 50_000;
    let hub: HubProcess;
    let space: string;

    before(async () => {
      hub = await startHub({ args: ['--query-timeout', '1ms'] });
      space = await createSpace(hub);
      await fill(hub, space, FEATURES);
    });
    after(async () => hub?.stop());

    // A filter that matches nothing makes the first page scan all 50,000 features: far more than 1 ms.
    test('a search whose page runs past the deadline answers 504 Timeout', async () => {
      assertTimeout(await call(hub, 'GET', `/hub/spaces/${space}/search?p.n=-1`));
      assertTimeout(await call(hub, 'GET', `/hub/spaces/${space}/iterate?p.n=-1`));
      assert.equal(sample(await metrics(hub), 'hub_db_deadline_hits_total'), 2, 'GET /metrics counts the deadlines hit');
      // A lookup by id is one short statement: it still answers.
      const one = await call(hub, 'GET', `/hub/spaces/${space}/features/f7`);
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.id, 'f7');
    });

    test('a count running past the deadline answers 504 Timeout', async () => {
      assertTimeout(await call(hub, 'GET', `/hub/spaces/${space}/count?p.n=-1`));
    });

    test('without the tiny deadline the same reads answer', async () => {
      await hub.stop({ keepData: true });
      hub = await startHub({ dataDir: hub.dataDir });
      const search = await call(hub, 'GET', `/hub/spaces/${space}/search?p.n=-1`);
      assert.equal(search.status, 200, search.text);
      assert.deepEqual(search.body.features, []);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count?p.n=-1`);
      assert.equal(count.status, 200, count.text);
      assert.equal(count.body.count, 0);
    });

    test('a client that goes away in the middle of a long iterate leaves the hub serving', async () => {
      for (let round = 0; round < 3; round++) {
        const read = startRead(hub, `/hub/spaces/${space}/iterate?limit=100000`);
        const response = await read.response;
        assert.equal(response.status, 200);
        const reader = response.body!.getReader();
        assert.equal((await reader.read()).done, false);
        read.abort();
        await assert.rejects(reader.read());
        assert.equal((await call(hub, 'GET', '/hub')).status, 200);
      }
      await assertServing(hub, space, FEATURES);
    });
  });
}

if (BACKENDS.includes('postgres')) {
  describe('query deadlines and cancellation (postgres)', () => {
    const FEATURES = 1500;
    /**
     * One page of 1,000 such features passes the 4 MiB the hub reads before its status line (to hash them for the
     * ETag), so an iterate of all of them starts its answer after the first page and reads the second while streaming.
     */
    const LABEL_LENGTH = 4500;
    /** Default deadline (60 s): a statement still running after a cancel shows that the cancel did not work. */
    let hub: HubProcess;
    /** A 2 s deadline, on the same database. */
    let shortDeadline: HubProcess;
    let space: string;
    const lockers: pg.Client[] = [];

    /** A session of the test's own that takes every lock it asks for until `release`. */
    async function locker(): Promise<{ lock(): Promise<unknown>; pid: number; release(): Promise<void> }> {
      const client = new pg.Client({ connectionString: hub.storage, application_name: 'deadline-test' });
      await client.connect();
      lockers.push(client);
      const { rows: [{ pid }] } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await client.query('BEGIN');
      return {
        pid,
        lock: () => client.query('LOCK TABLE features IN ACCESS EXCLUSIVE MODE'),
        release: async () => { await client.query('ROLLBACK'); },
      };
    }

    /** The statements of this file's hubs (their database; other test files share the cluster) running or waiting for a lock right now. */
    async function hubStatements(observer: pg.Client, waitingForLock = false): Promise<number> {
      const { rows: [{ n }] } = await observer.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'spatial-data-hub' AND state = 'active' AND ($1 = false OR wait_event_type = 'Lock')`, [waitingForLock]);
      return n;
    }

    async function waitsForLock(observer: pg.Client, pid: number): Promise<boolean> {
      const { rows } = await observer.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock'`, [pid]);
      return rows.length > 0;
    }

    let observer: pg.Client;

    before(async () => {
      hub = await startHub({ backend: 'postgres', args: ['--pg-pool-size', '2'] });
      shortDeadline = await startHub({ backend: 'postgres', storage: hub.storage, args: ['--query-timeout', '2s', '--pg-pool-size', '2'] });
      observer = new pg.Client({ connectionString: hub.storage, application_name: 'deadline-test' });
      await observer.connect();
      space = await createSpace(hub);
      await fill(hub, space, FEATURES, LABEL_LENGTH);
    });
    after(async () => {
      await Promise.all(lockers.map((client) => client.end().catch(() => {})));
      await observer?.end();
      await shortDeadline?.stop();
      await hub?.stop();
    });

    // A lock on the features table holds every statement that reads or writes features until the deadline cancels it.
    test('reads and writes running past the deadline are cancelled in the database and answer 504 Timeout', { timeout: STUCK }, async () => {
      const held = await locker();
      await held.lock();
      try {
        assertTimeout(await call(shortDeadline, 'GET', `/hub/spaces/${space}/search?p.n=-1`));
        assertTimeout(await call(shortDeadline, 'GET', `/hub/spaces/${space}/iterate`));
        assertTimeout(await call(shortDeadline, 'GET', `/hub/spaces/${space}/count?p.n=-1`));
        assertTimeout(await call(shortDeadline, 'PUT', `/hub/spaces/${space}/features/late`, { body: point('late') }));
        assert.equal(await hubStatements(observer), 0, 'the cancelled statements are gone from the database');
        assert.ok((sample(await metrics(shortDeadline), 'hub_db_deadline_hits_total') ?? 0) >= 4, 'GET /metrics counts the deadlines hit');
      } finally {
        await held.release();
      }
      assert.equal((await call(shortDeadline, 'GET', `/hub/spaces/${space}/features/late`)).status, 404, 'the cancelled write changed nothing');
      await assertServing(shortDeadline, space, FEATURES);
    });

    /** Backends of the hubs (not their cancellers) started after `since`, a time of the database's clock. */
    async function hubBackendsSince(since: string): Promise<number> {
      const { rows: [{ n }] } = await observer.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'spatial-data-hub' AND backend_start > $1`, [since]);
      return n;
    }

    test('a client that goes away before the answer starts cancels its statement, and its connection serves on', { timeout: STUCK }, async () => {
      // Both pooled connections open before the cancels: the reads after them then need no new one.
      for (const read of await Promise.all(Array.from({ length: 4 }, () => call(hub, 'GET', `/hub/spaces/${space}/search?limit=10`)))) {
        assert.equal(read.status, 200, read.text);
      }
      const { rows: [{ now }] } = await observer.query<{ now: string }>('SELECT clock_timestamp()::text AS now');
      const before = await metrics(hub);
      // bbox: its signal is made only when the read reaches the storage (an answer from the cache never needs one).
      for (const path of ['search?p.n=-1', 'count?p.n=-1', 'features?id=f1&id=f2', 'bbox?west=-180&south=-90&east=180&north=90&p.n=-1']) {
        const held = await locker();
        await held.lock();
        try {
          const read = startRead(hub, `/hub/spaces/${space}/${path}`);
          await eventually(`${path} waits for the lock`, async () => (await hubStatements(observer, true)) > 0);
          read.abort();
          await eventually('no statement of the hub runs any more', async () => (await hubStatements(observer)) === 0);
        } finally {
          await held.release();
        }
      }
      // Three cancelled reads on a pool of two connections: a leaked connection would leave these waiting.
      const reads = await Promise.all(Array.from({ length: 4 }, () => call(hub, 'GET', `/hub/spaces/${space}/search?limit=10`)));
      for (const read of reads) assert.equal(read.status, 200, read.text);
      await assertServing(hub, space, FEATURES);
      assert.equal(await hubBackendsSince(now), 0, 'the cancelled reads\' connections went back to the pool, no new backend was needed');
      const after = await metrics(hub);
      assert.equal(sample(after, 'hub_db_deadline_hits_total'), 0, 'a read cancelled because its client left is no deadline hit');
      // Counted as the client's departure before any answer (499), not as the 200 the handler had not sent.
      for (const route of ['search', 'count', 'features', 'bbox']) {
        const labels = { method: 'GET', route: `/hub/spaces/:spaceId/${route}`, status: '499', closed_by: 'client' };
        assert.equal(grown(before, after, labels), 1, `${route}: ${after}`);
      }
    });

    /**
     * Starts an iterate of every feature on `target` whose second page waits for a lock of the test's own, and runs
     * `meanwhile` once its 200 arrived; the locks are released after.
     */
    async function withSecondPageHeld(target: HubProcess, meanwhile: (read: ReturnType<typeof startRead>, response: Response) => Promise<void>): Promise<void> {
      const first = await locker();
      const second = await locker();
      await first.lock();
      try {
        const read = startRead(target, `/hub/spaces/${space}/iterate?limit=100000`);
        await eventually('the first page waits for the lock', async () => (await hubStatements(observer, true)) > 0);
        // Queued behind the first page: it takes the table once the first page has been read, before the second.
        const secondLocked = second.lock();
        await eventually('the second lock is queued', () => waitsForLock(observer, second.pid));
        await first.release();
        await secondLocked;
        const response = await read.response;
        assert.equal(response.status, 200);
        await meanwhile(read, response);
      } finally {
        await first.release().catch(() => {});
        await second.release();
      }
    }

    test('a client that goes away in the middle of an iterate cancels the statement reading its next page', { timeout: STUCK }, async () => {
      await withSecondPageHeld(hub, async (read, response) => {
        const reader = response.body!.getReader();
        assert.equal((await reader.read()).done, false);
        await eventually('the second page waits for the lock', async () => (await hubStatements(observer, true)) > 0);
        read.abort();
        await eventually('no statement of the hub runs any more', async () => (await hubStatements(observer)) === 0);
      });
      await assertServing(hub, space, FEATURES);
    });

    test('an iterate whose next page passes the deadline after its 200 went out is cut by the hub, and counted as cut by the hub', { timeout: STUCK }, async () => {
      const iterate = { method: 'GET', route: '/hub/spaces/:spaceId/iterate' };
      const before = await metrics(shortDeadline);
      await withSecondPageHeld(shortDeadline, async (_read, response) => {
        const reader = response.body!.getReader();
        // The second page waits for the lock until the 2 s deadline cancels it: the answer can then only end short.
        await assert.rejects((async () => {
          for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read());
        })());
      });
      const after = await metrics(shortDeadline);
      assert.equal(grown(before, after, { ...iterate, status: '200', closed_by: 'hub' }), 1, after);
      assert.equal(grown(before, after, { ...iterate, status: '200', closed_by: 'client' }), 0, after);
      // A count, not assertServing's iterate of every feature: on a loaded machine that one may pass the 2 s itself.
      const count = await call(shortDeadline, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, FEATURES, count.text);
    });
  });
}
