// What an operator reads (docs/operations.md): GET /metrics and who may read it, the access log (never a secret), and readiness vs liveness.
import assert from 'node:assert/strict';
import { renameSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { collection, point } from '../helpers/features.js';
import { call, createSpaceWith } from '../helpers/http-client.js';
import { ADMIN_TOKEN, BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { type PostgresCluster, startPostgresCluster } from '../helpers/postgres-cluster.js';
import { metrics, sample } from '../helpers/metrics.js';
import { eventually } from '../helpers/raw-http.js';
import { ADMIN_PASSWORD, login, send } from '../helpers/sessions.js';

/** The access lines the hub logged so far, parsed. */
function accessLines(hub: HubProcess): Array<Record<string, unknown>> {
  return hub.stdout.split('\n').filter((line) => line.includes('"msg":"request"')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** A non-loopback address of this machine, to call the hub as a remote client would; undefined without one. */
function externalAddress(): string | undefined {
  for (const addresses of Object.values(networkInterfaces())) {
    const address = addresses?.find((candidate) => candidate.family === 'IPv4' && !candidate.internal);
    if (address) return address.address;
  }
  return undefined;
}

for (const backend of BACKENDS) {
  describe(`operations (${backend})`, () => {
    let hub: HubProcess;
    /** postgres: a cluster of this file's own, so that the readiness test can stop it. */
    let cluster: PostgresCluster | undefined;
    let space: string;

    before(async () => {
      if (backend === 'postgres') cluster = await startPostgresCluster();
      hub = await startHub({ backend, cluster, env: { HUB_LOG_LEVEL: 'info', HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
      space = await createSpaceWith(hub, Array.from({ length: 20 }, (_, i) => point(`p${i}`, { n: i }, [i / 10, i / 10])));
    });
    after(async () => {
      await hub.stop();
      await cluster?.destroy();
    });

    test('GET /metrics counts requests by route pattern (never the path), method and status, with latency, bytes, pool, deadline and cache figures', async () => {
      const put = { method: 'PUT', route: '/hub/spaces/:spaceId/features' };
      const before = await metrics(hub);
      const body = JSON.stringify(collection(point('m1', { a: 1 }), point('m2', { a: 2 })));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: body })).status, 200);
      for (let i = 0; i < 3; i++) assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/not-there-${i}`)).status, 404);
      for (let i = 0; i < 2; i++) assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=-1&south=-1&east=3&north=3`)).status, 200);
      const text = await metrics(hub);
      const feature = { method: 'GET', route: '/hub/spaces/:spaceId/features/:featureId' };
      assert.equal(sample(text, 'hub_http_requests_total', { ...feature, status: '404' }), 3, text);
      assert.equal(sample(text, 'hub_http_request_duration_seconds_count', feature), 3);
      assert.equal(sample(text, 'hub_http_request_duration_seconds_bucket', { ...feature, le: '+Inf' }), 3);
      const grown = (name: string) => (sample(text, name, put) ?? 0) - (sample(before, name, put) ?? 0);
      assert.equal(grown('hub_http_request_body_bytes_total'), Buffer.byteLength(body));
      assert.ok(grown('hub_http_response_bytes_total') > 100);
      assert.ok(!text.includes(space) && !text.includes('not-there'), 'no path, space or feature id is a label');
      assert.equal(sample(text, 'hub_http_requests_in_flight'), 1, 'the scrape itself is in flight');
      assert.equal(sample(text, 'hub_http_requests_shed_total'), 0);
      assert.equal(sample(text, 'hub_db_deadline_hits_total'), 0);
      assert.ok((sample(text, 'hub_db_connections') ?? 0) >= 1, 'the pool holds a connection');
      assert.equal(sample(text, 'hub_db_connections_busy'), 0);
      assert.equal(sample(text, 'hub_db_waiting'), 0);
      assert.equal(sample(text, 'hub_cache_lookups_total', { cache: 'answer', result: 'hit' }), 1, 'the second bbox read is a hit');
      assert.equal(sample(text, 'hub_cache_lookups_total', { cache: 'answer', result: 'miss' }), 1);
      assert.ok((sample(text, 'hub_cache_lookups_total', { cache: 'token', result: 'hit' }) ?? 0) >= 1, 'the token is resolved once, then cached');
      assert.ok((sample(text, 'hub_answer_cache_bytes') ?? 0) > 0);
      assert.ok(sample(text, 'process_cpu_user_seconds_total') !== undefined, 'the process metrics are there too');
      // The scrapes before this one are counted under their pattern.
      assert.equal(sample(await metrics(hub), 'hub_http_requests_total', { method: 'GET', route: '/metrics', status: '200' }), 2);
    });

    test('a request no route matches counts as route "unmatched"', async () => {
      assert.equal((await call(hub, 'GET', '/no/such/path/x1y2z3')).status, 404);
      const text = await metrics(hub);
      assert.ok((sample(text, 'hub_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) ?? 0) >= 1, text);
      assert.ok(!text.includes('x1y2z3'));
    });

    test('every request carrying a secret (bearer header, access_token, session cookie, login password) is logged as one JSON access line without it', async () => {
      const cookie = await login(hub, 'admin', ADMIN_PASSWORD);
      const created = await send(hub, 'POST', '/token-api/tokens', { cookie, body: { urm: { 'xyz-hub': { readFeatures: [{}] } } } });
      assert.equal(created.status, 200, created.text);
      const issued = (created.json as { token: string }).token;
      const me = await send(hub, 'GET', '/account-api/me', { cookie });
      const adminId = (me.json as { id: string }).id;
      const bearer = await call(hub, 'GET', `/hub/spaces/${space}`, { headers: { authorization: `Bearer ${issued}` } });
      assert.equal(bearer.status, 200, bearer.text);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/p1?access_token=${issued}`, { anonymous: true })).status, 200);
      assert.equal((await call(hub, 'GET', `/no-route?access_token=${issued}`, { anonymous: true })).status, 404);
      assert.equal((await call(hub, 'GET', `/hub/spaces?access_token=${issued}x`, { anonymous: true })).status, 401);
      assert.equal((await send(hub, 'POST', '/account-api/login', { body: { username: 'admin', password: `${ADMIN_PASSWORD}-wrong` } })).status, 401);
      assert.equal((await send(hub, 'GET', '/token-api/tokens', { cookie })).status, 200);
      const streamId = bearer.headers.get('stream-id');
      const line = await eventually('the access line of the bearer request', async () => accessLines(hub).find((entry) => entry.streamId === streamId));
      assert.equal(line.level, 30, 'logged at info');
      assert.equal(line.method, 'GET');
      assert.equal(line.route, '/hub/spaces/:spaceId');
      assert.equal(line.status, 200);
      assert.equal(typeof line.ms, 'number');
      assert.equal(line.bytesIn, 0);
      assert.ok(typeof line.bytesOut === 'number' && line.bytesOut > Buffer.byteLength(bearer.text), 'headers and body');
      assert.equal(line.account, adminId);
      // An answer that ended whole has no `completed` or `closedBy` (those mark one cut short: departed-clients.test.ts).
      assert.deepEqual(Object.keys(line).sort(), ['account', 'bytesIn', 'bytesOut', 'hostname', 'level', 'method', 'ms', 'msg', 'pid', 'route', 'status', 'streamId', 'time']);
      await eventually('the access lines of the requests with secrets', async () => (accessLines(hub).some((entry) => entry.route === '/token-api/tokens' && entry.method === 'GET') ? true : undefined));
      const lines = accessLines(hub);
      assert.ok(lines.some((entry) => entry.route === 'unmatched' && entry.status === 404));
      assert.ok(lines.some((entry) => entry.route === '/account-api/login' && entry.status === 401 && typeof entry.bytesIn === 'number' && entry.bytesIn > 0));
      const output = hub.stdout + hub.stderr;
      for (const secret of [issued, ADMIN_TOKEN, ADMIN_PASSWORD, cookie.split('=')[1], 'access_token']) {
        assert.ok(!output.includes(secret), `the log holds a secret (${secret.slice(0, 4)}…)`);
      }
    });

    test('readiness: /hub/health-status answers 503 UNAVAILABLE while the storage is unreachable and 200 again after; /hub (liveness) stays 200', async () => {
      const ready = await call(hub, 'GET', '/hub/health-status', { anonymous: true });
      assert.equal(ready.status, 200, ready.text);
      assert.equal((ready.body.status as { result: string }).result, 'OK');
      assert.deepEqual(ready.body.storage, { reachable: true });
      const file = join(hub.dataDir, 'hub.db');
      if (cluster) await cluster.stop();
      else renameSync(file, `${file}.moved`);
      try {
        const down = await call(hub, 'GET', '/hub/health-status', { anonymous: true });
        assert.equal(down.status, 503, down.text);
        assert.equal((down.body.status as { result: string }).result, 'UNAVAILABLE');
        assert.deepEqual(down.body.storage, { reachable: false });
        assert.ok(!down.text.includes(hub.storage) && !down.text.includes('hub.db') && !/ECONN|refused/i.test(down.text), 'no location or cause is told');
        const live = await call(hub, 'GET', '/hub', { anonymous: true });
        assert.equal(live.status, 200, live.text);
        assert.equal((live.body.status as { result: string }).result, 'OK');
      } finally {
        if (cluster) await cluster.start();
        else renameSync(`${file}.moved`, file);
      }
      const back = await eventually('readiness after the storage is back', async () => {
        const response = await call(hub, 'GET', '/hub/health-status', { anonymous: true });
        return response.status === 200 ? response : undefined;
      });
      assert.deepEqual(back.body.storage, { reachable: true });
    });
  });
}

describe('who may read GET /metrics (HUB_METRICS)', () => {
  const hubs: HubProcess[] = [];
  const start = async (env: Record<string, string>, args: string[] = []) => {
    const started = await startHub({ backend: 'sqlite', env, args });
    hubs.push(started);
    return started;
  };
  after(async () => { await Promise.all(hubs.map((one) => one.stop())); });

  test('by default only loopback callers: a caller on another address gets 403 naming the setting', async (context) => {
    const address = externalAddress();
    if (!address) {
      context.skip('this machine has no non-loopback IPv4 address to call from');
      return;
    }
    const hub = await start({}, ['--host', '0.0.0.0']);
    const port = new URL(hub.url).port;
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200);
    const remote = await fetch(`http://${address}:${port}/metrics`);
    assert.equal(remote.status, 403);
    const body = await remote.json() as { code: string; message: string };
    assert.equal(body.code, 'metricsForbidden');
    assert.match(body.message, /loopback.*HUB_METRICS/);
  });

  test('off answers 404 as for any unknown path; token:… answers 403 without the token or with another, 200 with it', async () => {
    const off = await start({ HUB_METRICS: 'off' });
    const none = await fetch(`${off.url}/metrics`);
    assert.equal(none.status, 404);
    assert.equal((await none.json() as { code: string }).code, 'routeNotFound');
    const secret = 'metrics-secret-0123456789';
    const guarded = await start({ HUB_METRICS: `token:${secret}` });
    assert.equal((await fetch(`${guarded.url}/metrics`)).status, 403);
    assert.equal((await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${secret}x` } })).status, 403);
    assert.equal((await fetch(`${guarded.url}/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).status, 403, 'a hub token is not the metrics token');
    await metrics(guarded, { authorization: `Bearer ${secret}` });
    assert.ok(!guarded.stdout.includes(secret), 'the start-up line hides the token');
  });

  test('an invalid setting stops the start with a message', async () => {
    await assert.rejects(startHub({ backend: 'sqlite', env: { HUB_METRICS: 'token:short' } }), /Invalid metrics access/);
  });

  test('with two workers, the node\'s figures: requests served by either worker are summed', async () => {
    const hub = await start({ HUB_WORKERS: '2' });
    const connections = 8;
    // Separate connections, so that the primary hands them to both workers.
    await Promise.all(Array.from({ length: connections }, () => fetch(`${hub.url}/hub`, { headers: { connection: 'close' } })));
    const text = await metrics(hub);
    assert.equal(sample(text, 'hub_http_requests_total', { method: 'GET', route: '/hub', status: '200' }), connections, text);
    assert.equal(sample(text, 'hub_db_connections'), 2, 'one SQLite connection per worker');
  });
});
