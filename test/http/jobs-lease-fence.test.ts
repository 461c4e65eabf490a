// Black-box test of the jobs' lease fence (docs/jobs.md, "One node at a time") on both engines: a node paused while a chunk of its import is in flight, whose lease another node took meanwhile, commits nothing of it.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { call, createSpace } from '../helpers/http-client.js';
import { historyRows } from '../helpers/history-rows.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { metrics, sample } from '../helpers/metrics.js';

/** A short poll and lease, so that the other node takes the job soon after the first stops; no query deadline, so that the paused node's write is not cancelled for the time it was stopped. */
const ENV = { HUB_JOBS_POLL: '50ms', HUB_JOBS_LEASE: '1500ms', HUB_JOBS_CHUNK: '500', HUB_QUERY_TIMEOUT: '0' };
const CHUNK = 500;
const TOTAL = 12 * CHUNK;

const lines = Array.from({ length: TOTAL }, (_, i) => JSON.stringify({
  type: 'Feature', id: `f${i}`, geometry: { type: 'Point', coordinates: [(i % 1440) / 4 - 180, (i % 680) / 4 - 85] }, properties: { n: i },
})).join('\n') + '\n';

interface JobRow { state: string; next: number; owner: string | null }

const SELECT_JOB = 'SELECT state, next_item AS next, lease_owner AS owner FROM jobs WHERE id = ';

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
  const client = new pg.Client({ connectionString: hub.storage });
  await client.connect();
  try {
    return (await client.query<JobRow>(`${SELECT_JOB}$1`, [id])).rows[0];
  } finally {
    await client.end();
  }
}

/**
 * Holds the storage's write of features (SQLite: the file's write lock; PostgreSQL: an EXCLUSIVE lock of the features table,
 * which reads and the jobs table pass) and reads the job's row meanwhile: what the hubs do is frozen until `release`.
 */
interface WriteBlock {
  job(id: string): Promise<JobRow>;
  /** Whether the hub's chunk is waiting for the block (SQLite: its writes waiting for the lock; PostgreSQL: a backend waiting for a lock). */
  waiting(hub: HubProcess): Promise<boolean>;
  release(): Promise<void>;
}

async function blockWrites(hub: HubProcess): Promise<WriteBlock> {
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'), { timeout: 10_000 });
    db.prepare('BEGIN IMMEDIATE').run();
    return {
      job: async (id) => db.prepare(`${SELECT_JOB}?`).get(id) as JobRow,
      // The hub's job poll waits for the lock too: two waiting are the poll and the chunk.
      waiting: async (of) => (sample(await metrics(of), 'hub_db_waiting') ?? 0) >= 2,
      release: async () => {
        db.prepare('ROLLBACK').run();
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: hub.storage });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE features IN EXCLUSIVE MODE');
  return {
    job: async (id) => (await client.query<JobRow>(`${SELECT_JOB}$1`, [id])).rows[0],
    waiting: async () => (await client.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'spatial-data-hub'
      AND wait_event_type = 'Lock'`)).rows.length > 0,
    release: async () => {
      await client.query('ROLLBACK');
      await client.end();
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

for (const backend of BACKENDS) {
  describe(`jobs: the lease fences each chunk's write (${backend})`, () => {
    test('a node paused mid-chunk while another takes its lease commits nothing of that chunk: each chunk is one version, the counts match the space', async () => {
      const a = await startHub({ backend, env: ENV });
      let b: HubProcess | undefined;
      let block: WriteBlock | undefined;
      try {
        const space = await createSpace(a, { versionsToKeep: 1000 });
        const created = await call(a, 'POST', '/hub/jobs', { body: { source: { type: 'Files', format: 'GEOJSONSEQ' }, target: { type: 'Space', id: space } } });
        assert.equal(created.status, 200, created.text);
        const id = created.body.id as string;
        const uploaded = await call(a, 'POST', `/hub/jobs/${id}/inputs`, { rawBody: lines, headers: { 'content-type': 'application/octet-stream' } });
        assert.equal(uploaded.status, 200, uploaded.text);
        assert.equal((await call(a, 'PATCH', `/hub/jobs/${id}/status`, { body: { desiredAction: 'START' } })).status, 200);
        await until('the job to run on the first node', async () => ((await call(a, 'GET', `/hub/jobs/${id}/status`)).body.state === 'RUNNING' ? true : undefined));

        // The first node's next chunk waits for the block; then the node stops (kill -STOP) with that chunk in flight.
        block = await blockWrites(a);
        const frozen = await block.job(id);
        assert.equal(frozen.state, 'RUNNING', 'the job was still running when the writes were blocked');
        assert.ok(Number(frozen.next) < TOTAL && frozen.owner !== null, JSON.stringify(frozen));
        await until('the chunk to wait for the block', async () => ((await block?.waiting(a)) ? true : undefined));
        a.process.kill('SIGSTOP');
        await block.release();
        block = undefined;

        // A second node on the same storage takes the job once the stopped node's lease expired.
        b = await startHub(backend === 'postgres' ? { backend, env: ENV, dataDir: a.dataDir, storage: a.storage } : { backend, env: ENV, dataDir: a.dataDir });
        const second = b;
        await until('the second node to take the lease', async () => {
          const row = await jobRow(a, id);
          return row.owner !== null && row.owner !== frozen.owner ? true : undefined;
        });
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
        assert.deepEqual(await historyRows(a, space), { states: 0, versions: TOTAL / CHUNK });
      } finally {
        if (a.process.exitCode === null) a.process.kill('SIGCONT');
        await block?.release();
        await b?.stop({ keepData: true });
        await a.stop();
      }
    });
  });
}
