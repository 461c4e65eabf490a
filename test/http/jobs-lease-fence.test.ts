// Black-box test of the jobs' lease fence (docs/jobs.md, "One node at a time") on both engines: a node paused while a chunk of its import is in flight, whose lease another node took meanwhile, commits nothing of it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { call, createSpace } from '../helpers/http-client.js';
import { historyRows } from '../helpers/history-rows.js';
import { type Backend, BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { metrics, sample } from '../helpers/metrics.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import { withClient } from '../helpers/pg-client.js';

/** A short poll and lease, so that the other node takes the job soon after the first stops; no query deadline, so that the paused node's write is not cancelled for the time it was stopped. */
const ENV = { HUB_JOBS_POLL: '50ms', HUB_JOBS_LEASE: '1500ms', HUB_JOBS_CHUNK: '500', HUB_QUERY_TIMEOUT: '0' };
const CHUNK = 500;
const TOTAL = 8 * CHUNK;

const lines = Array.from({ length: TOTAL }, (_, i) => JSON.stringify({
  type: 'Feature', id: `f${i}`, geometry: { type: 'Point', coordinates: [(i % 1440) / 4 - 180, (i % 680) / 4 - 85] }, properties: { n: i },
})).join('\n') + '\n';

interface JobRow { state: string; next: number; owner: string | null }

const SELECT_JOB = 'SELECT state, next_item AS next, lease_owner AS owner FROM jobs WHERE id = ';

/** The PostgreSQL databases of a hub; the first holds the catalog (the spaces, the jobs). */
const databasesOf = (hub: HubProcess) => hub.storage.split(',');

/** The job's row as the storage holds it: its state, checkpoint and lease owner (which the API does not show). */
async function jobRow(hub: HubProcess, id: string): Promise<JobRow> {
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'), { readonly: true });
    try {
      return db.prepare(`${SELECT_JOB}?`).get(id) as JobRow;
    } finally {
      db.close();
    }
  }
  const row = await withClient(databasesOf(hub)[0], async (client) => (await client.query<JobRow>(`${SELECT_JOB}$1`, [id])).rows[0]);
  return { ...row, next: Number(row.next) };
}

/** The index in HUB_STORAGE of the PostgreSQL database holding a space's features. */
async function databaseOf(hub: HubProcess, space: string): Promise<number> {
  const urls = databasesOf(hub);
  const [{ location }] = await withClient(urls[0], async (client) => (await client.query<{ location: string }>('SELECT location FROM spaces WHERE id = $1', [space])).rows);
  for (const [index, url] of urls.entries()) {
    if (await withClient(url, async (client) => (await client.query<{ id: string }>('SELECT id FROM hub_database')).rows[0].id === location)) return index;
  }
  throw new Error(`no database holds the space ${space}`);
}

/** The history a space keeps (ADR 002): superseded states and versions, from the database holding its features. */
async function historyOf(hub: HubProcess, space: string): Promise<{ states: number; versions: number }> {
  if (hub.backend === 'sqlite' || databasesOf(hub).length === 1) return historyRows(hub, space);
  const [catalog] = databasesOf(hub);
  const sid = await withClient(catalog, async (client) => (await client.query<{ sid: string }>('SELECT sid FROM spaces WHERE id = $1', [space])).rows[0].sid);
  return withClient(databasesOf(hub)[await databaseOf(hub, space)], async (client) => {
    const { rows: [row] } = await client.query<{ states: string; versions: string }>(`SELECT (SELECT count(*) FROM feature_history WHERE sid = $1) AS states,
      (SELECT count(*) FROM space_versions WHERE sid = $1) AS versions`, [sid]);
    return { states: Number(row.states), versions: Number(row.versions) };
  });
}

/**
 * Holds the storage's writes of features (SQLite: the file's write lock; PostgreSQL: an EXCLUSIVE lock of each database's
 * features table, which reads and the jobs table pass): the hub's import stops at its next chunk until `release`.
 */
interface WriteBlock {
  /** Whether the hub's chunk waits for the block (SQLite: the hub's writes waiting for the lock; PostgreSQL: a backend waiting for a lock). */
  waiting(hub: HubProcess): Promise<boolean>;
  release(): Promise<void>;
}

async function blockWrites(hub: HubProcess): Promise<WriteBlock> {
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'), { timeout: 10_000 });
    db.prepare('BEGIN IMMEDIATE').run();
    return {
      // The hub's job poll waits for the lock too: two waiting are the poll and the chunk.
      waiting: async (of) => (sample(await metrics(of), 'hub_db_waiting') ?? 0) >= 2,
      release: async () => {
        db.prepare('ROLLBACK').run();
        db.close();
      },
    };
  }
  const clients: pg.Client[] = [];
  for (const url of databasesOf(hub)) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    await client.query('BEGIN');
    await client.query('LOCK TABLE features IN EXCLUSIVE MODE');
  }
  const waitingIn = async (client: pg.Client) => (await client.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
    AND application_name = 'spatial-data-hub' AND wait_event_type = 'Lock'`)).rows.length > 0;
  return {
    waiting: async () => (await Promise.all(clients.map(waitingIn))).includes(true),
    release: async () => {
      for (const client of clients) {
        await client.query('ROLLBACK');
        await client.end();
      }
    },
  };
}

/** Polls `check` every 25 ms until it gives a value, for at most 15 s. */
async function until<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

interface Setup {
  name: string;
  backend: Backend;
  /** Storage for both nodes, and what to remove after them; undefined: the first node's own. */
  storage?: () => Promise<{ location: string; remove(): Promise<void> }>;
  /** Spaces created before the job's, so that the job's lands in the second database. */
  fillers: number;
}

async function twoDatabases(): Promise<{ location: string; remove(): Promise<void> }> {
  const databases = await Promise.all([createTestDatabase(), createTestDatabase()]);
  return { location: databases.map((database) => database.url).join(','), remove: async () => { await Promise.all(databases.map((database) => database.remove())); } };
}

const SETUPS: Setup[] = BACKENDS.flatMap((backend): Setup[] => (backend === 'sqlite'
  ? [{ name: 'sqlite, two processes on one file', backend, fillers: 0 }]
  : [{ name: 'postgres, two nodes on one database', backend, fillers: 0 },
    { name: 'postgres, the space in another database than the jobs', backend, storage: twoDatabases, fillers: 1 }]));

for (const setup of SETUPS) {
  describe(`jobs: the lease fences each chunk's write (${setup.name})`, () => {
    test('a node paused mid-chunk while another takes its lease commits nothing of that chunk: each chunk is one version, the counts match the space', async () => {
      const storage = await setup.storage?.();
      const a = await startHub({ backend: setup.backend, env: ENV, storage: storage?.location });
      let b: HubProcess | undefined;
      let block: WriteBlock | undefined;
      try {
        for (let filler = 0; filler < setup.fillers; filler++) await createSpace(a);
        const space = await createSpace(a, { versionsToKeep: 1000 });
        if (setup.fillers > 0) assert.equal(await databaseOf(a, space), 1, 'the space is in the second database, the jobs in the first');
        const created = await call(a, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } } });
        assert.equal(created.status, 200, created.text);
        const id = created.body.id as string;
        const uploaded = await call(a, 'POST', `/hub/jobs/${id}/inputs`, { rawBody: lines, headers: { 'content-type': 'application/octet-stream' } });
        assert.equal(uploaded.status, 200, uploaded.text);
        assert.equal((await call(a, 'PATCH', `/hub/jobs/${id}/status`, { body: { desiredAction: 'START' } })).status, 200);
        await until('the job to run on the first node', async () => ((await call(a, 'GET', `/hub/jobs/${id}/status`)).body.state === 'RUNNING' ? true : undefined));

        // The first node's next chunk waits for the block; then the node stops (kill -STOP) with that chunk in flight.
        block = await blockWrites(a);
        const frozen = await jobRow(a, id);
        assert.equal(frozen.state, 'RUNNING', 'the job was still running when the writes were blocked');
        assert.ok(frozen.next < TOTAL && frozen.owner !== null, JSON.stringify(frozen));
        const waiting = block;
        await until('the chunk to wait for the block', async () => ((await waiting.waiting(a)) ? true : undefined));
        a.process.kill('SIGSTOP');
        await block.release();
        block = undefined;

        // A second node on the same storage and job files takes the job once the stopped node's lease expired.
        b = await startHub({ backend: setup.backend, env: ENV, dataDir: a.dataDir, storage: setup.backend === 'postgres' ? a.storage : undefined });
        const second = b;
        // (Or already finished the job, which gives the lease up: on SQLite nothing holds the second node back.)
        await until('the second node to take the lease', async () => ((await jobRow(a, id)).owner !== frozen.owner ? true : undefined));
        a.process.kill('SIGCONT');
        const done = await until('the job to finish on the second node', async () => {
          const now = (await call(second, 'GET', `/hub/jobs/${id}/status`)).body;
          return ['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(now.state as string) ? now : undefined;
        });
        // Time for the first node's chunk, had it not been fenced, to commit.
        await new Promise((resolve) => setTimeout(resolve, 500));

        assert.equal(done.state, 'SUCCEEDED', JSON.stringify(done));
        assert.equal(done.writtenFeatures, TOTAL);
        assert.equal((await call(second, 'GET', `/hub/spaces/${space}/count`)).body.count, TOTAL);
        // Each chunk is one version, and no feature was written twice (a second write keeps the first state as history).
        assert.deepEqual(await historyOf(a, space), { states: 0, versions: TOTAL / CHUNK });
      } finally {
        if (a.process.exitCode === null) a.process.kill('SIGCONT');
        await block?.release();
        await b?.stop({ keepData: true });
        await a.stop();
        await storage?.remove();
      }
    });
  });
}
