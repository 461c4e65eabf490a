// Two hubs on one PostgreSQL database: a token deleted through one stops working on both at once, also when a node lost its listener.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { ADMIN_PASSWORD, login, send } from '../helpers/sessions.js';

const withPostgres = BACKENDS.includes('postgres');

describe('token revocation across nodes (postgres)', { skip: withPostgres ? false : 'the postgres backend is not part of this run' }, () => {
  let first: HubProcess;
  let second: HubProcess;
  let session: string;
  let database: pg.Client;

  before(async () => {
    first = await startHub({ backend: 'postgres', env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    second = await startHub({ backend: 'postgres', storage: first.storage, env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    session = await login(first, 'admin', ADMIN_PASSWORD);
    database = new pg.Client({ connectionString: first.storage });
    await database.connect();
  });
  after(async () => {
    await database?.end();
    await second?.stop({ keepData: true });
    await first?.stop();
  });

  async function newToken(): Promise<string> {
    const created = await send(first, 'POST', '/token-api/tokens', { cookie: session, body: { urm: { 'xyz-hub': { readFeatures: [{}] } } } });
    assert.equal(created.status, 200, created.text);
    return (created.json as { token: string }).token;
  }

  /** Reads with the token on a node; the first read caches it there. */
  const statusOn = async (hub: HubProcess, token: string) => (await call(hub, 'GET', '/hub/spaces?owner=*', { headers: { authorization: `Bearer ${token}` } })).status;

  /** The backend pid of a node's listening connection, once it listens (its application name carries the node's pid). */
  async function listenerOf(hub: HubProcess): Promise<number> {
    for (;;) {
      const { rows } = await database.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query ILIKE 'LISTEN%'`, [`spatial-hub revocations ${hub.process.pid}`]);
      if (rows.length > 0) return rows[0].pid;
      await sleep(50);
    }
  }

  /**
   * The status on a node once it settles, polled for up to 2 s: a notification is delivered asynchronously, but
   * well inside the 5 s for which the cache alone would keep accepting a deleted token.
   */
  async function settledStatusOn(hub: HubProcess, token: string, expected: number): Promise<number> {
    const start = performance.now();
    let status = await statusOn(hub, token);
    while (status !== expected && performance.now() - start < 2000) {
      await sleep(20);
      status = await statusOn(hub, token);
    }
    return status;
  }

  test('a token deleted on one node is refused on the other as soon as the notification arrives', async () => {
    const token = await newToken();
    await listenerOf(second);
    assert.equal(await statusOn(second, token), 200);
    assert.equal(await statusOn(first, token), 200);
    const deleted = await send(first, 'DELETE', `/token-api/tokens/${token}`, { cookie: session });
    assert.equal(deleted.status, 204, deleted.text);
    assert.equal(await settledStatusOn(second, token, 401), 401, 'the other node cached it and must have forgotten it');
    assert.equal(await statusOn(first, token), 401);
  });

  test('a node that lost its listener forgets every cached token, and listens again', async () => {
    const token = await newToken();
    await listenerOf(second);
    assert.equal(await statusOn(second, token), 200, 'cached on the second node');
    const before = await listenerOf(second);
    await database.query('SELECT pg_terminate_backend($1)', [before]);
    let after = before;
    while (after === before) after = await listenerOf(second);
    // Deleted behind every node's back: no notification goes out, so only forgetting on the lost connection refuses it.
    await database.query('DELETE FROM tokens WHERE secret_hash = encode(sha256($1::bytea), \'hex\')', [token]);
    assert.equal(await statusOn(second, token), 401);
  });
});
