// Black-box tests of webhook subscriptions (issue 24 section 2, docs/subscriptions.md) with real receivers on loopback, on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { deleteStoredToken, issueToken, ownerRights } from '../helpers/tokens.js';
import { signatureValid, until, WebhookReceiver } from '../helpers/webhook-receiver.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, lon: number, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, 0] }, properties: { ...properties, [NS]: { tags: [] } } });

/** Short intervals so that retries, back-off and lease expiry take a test seconds, not minutes. */
const ENV = {
  HUB_ALLOW_PRIVATE_WEBHOOKS: 'true', HUB_SUBSCRIPTION_POLL: '100ms', HUB_SUBSCRIPTION_LEASE: '2s', HUB_SUBSCRIPTION_RETRIES: '4',
  HUB_SUBSCRIPTION_BACKOFF: '100ms', HUB_WEBHOOK_TIMEOUT: '1s',
};

/** The received versions, each first arrival kept: at-least-once in order means 0 … n − 1 with no version skipped on the way. */
function assertInOrder(received: number[], count: number, first = 0): void {
  let highest = first - 1;
  for (const version of received) {
    assert.ok(version <= highest + 1, `version ${version} arrived before ${highest + 1}: ${received.join(',')}`);
    highest = Math.max(highest, version);
  }
  assert.deepEqual([...new Set(received)].sort((a, b) => a - b), Array.from({ length: count }, (_, index) => first + index), received.join(','));
}

for (const backend of BACKENDS) {
  describe(`subscriptions (${backend})`, () => {
    let hub: HubProcess;
    const receivers: WebhookReceiver[] = [];
    before(async () => { hub = await startHub({ backend, env: ENV }); });
    after(async () => {
      await hub.stop();
      await Promise.all(receivers.map((receiver) => receiver.stop()));
    });

    const receiver = async (answer?: ConstructorParameters<typeof WebhookReceiver>[0]) => {
      const started = await new WebhookReceiver(answer).start();
      receivers.push(started);
      return started;
    };
    const put = (space: string, features: object[]) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
    const subscribe = (space: string, body: object, token?: string) =>
      call(hub, 'POST', `/hub/spaces/${space}/subscriptions`, { body, ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}) });
    const status = async (space: string, id: string) => (await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/${id}`)).body.status as Record<string, unknown>;

    test('PER_TRANSACTION: one signed POST per version, in order; the secret is answered once', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const target = await receiver();
      const created = await subscribe(space, { id: 'tx', destination: target.url, config: { type: 'PER_TRANSACTION' } });
      assert.equal(created.status, 200, created.text);
      const secret = created.body.secret as string;
      assert.match(secret, /^[A-Za-z0-9_-]{40,}$/);
      assert.deepEqual(created.body.status, { state: 'ACTIVE', deliveredVersion: -1, lag: 0, retries: 0 });
      await put(space, [point('A', 1, { n: 1 }), point('B', 2, { n: 1 })]);
      await put(space, [point('A', 1, { n: 2 })]);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/B`)).status, 204);
      await until('3 versions arrived', () => target.deliveries.length >= 3);
      assert.deepEqual(target.versions, [0, 1, 2]);
      const [first, second, third] = target.deliveries.map((delivery) => delivery.body);
      assert.equal(first.type, 'Changeset');
      assert.equal(first.subscriptionId, 'tx');
      assert.equal(first.space, space);
      assert.deepEqual((first.inserted as { features: Array<{ id: string }> }).features.map((feature) => feature.id), ['A', 'B']);
      assert.deepEqual((second.updated as { features: Array<{ properties: { n: number } }> }).features.map((feature) => feature.properties.n), [2]);
      assert.deepEqual((third.deleted as { features: Array<{ id: string }> }).features.map((feature) => feature.id), ['B']);
      for (const delivery of target.deliveries) {
        assert.ok(signatureValid(delivery, secret), 'the signature verifies');
        assert.equal(delivery.headers['x-hub-subscription'], 'tx');
      }
      assert.ok(!signatureValid(target.deliveries[0], `${secret}x`), 'a wrong secret does not verify');
      await until('the status says version 2', async () => (await status(space, 'tx')).deliveredVersion === 2);
      const read = await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/tx`);
      assert.equal(read.body.secret, undefined);
      assert.ok(!read.text.includes(secret));
      assert.deepEqual(read.body.status, { state: 'ACTIVE', deliveredVersion: 2, lag: 0, retries: 0 });
      const list = await call(hub, 'GET', `/hub/spaces/${space}/subscriptions`);
      assert.ok(!list.text.includes(secret));
      assert.deepEqual((list.body as unknown as Array<{ id: string }>).map((entry) => entry.id), ['tx']);
    });

    test('PER_FEATURE with a JSONPath and a radius: only the matching features, one POST each', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const target = await receiver();
      const filter = { jsonPath: '$.features[?(@.properties.kind == "park")]', geometry: { type: 'Point', coordinates: [0, 0] }, radius: 200_000 };
      const created = await subscribe(space, { destination: target.url, config: { type: 'PER_FEATURE' }, filter });
      assert.equal(created.status, 200, created.text);
      assert.deepEqual(created.body.filter, filter);
      // Near and a park; far and a park; near but no park.
      await put(space, [point('near-park', 1, { kind: 'park' }), point('far-park', 10, { kind: 'park' }), point('near-road', 1, { kind: 'road' })]);
      await put(space, [point('near-park-2', 0.5, { kind: 'park' })]);
      // Moved out of the area: it matched before the change, so the change is delivered; a feature that never matched is not.
      await put(space, [point('near-park', 20, { kind: 'park' }), point('far-park', 11, { kind: 'park' })]);
      await until('3 features arrived', () => target.deliveries.length >= 3);
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.deepEqual(target.deliveries.map((delivery) => [delivery.body.type, delivery.body.action, (delivery.body.feature as { id: string }).id, delivery.body.version]),
        [['FeatureChange', 'inserted', 'near-park', 0], ['FeatureChange', 'inserted', 'near-park-2', 1], ['FeatureChange', 'updated', 'near-park', 2]]);
      assert.equal((target.deliveries[2].body.feature as { geometry: { coordinates: number[] } }).geometry.coordinates[0], 20, 'the state after the change');
    });

    test('CONTENT_CHANGE: the ids and the bounds of what changed, without the features', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const target = await receiver();
      assert.equal((await subscribe(space, { destination: target.url, config: { type: 'CONTENT_CHANGE' } })).status, 200);
      await put(space, [point('A', 1), point('B', 3)]);
      await until('1 notice arrived', () => target.deliveries.length >= 1);
      const { body } = target.deliveries[0];
      assert.equal(body.type, 'ContentChange');
      assert.deepEqual(body.inserted, ['A', 'B']);
      assert.deepEqual(body.updated, []);
      assert.deepEqual(body.bbox, [1, 0, 3, 0]);
      assert.equal(body.lastPart, true);
    });

    test('a receiver that fails, then recovers, and one that is slow or times out: every version, in order', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      // Fails the 2nd and 3rd POST; the 5th hangs past the 1 s timeout; every answer takes 50 ms.
      const target = await receiver((nth) => ({ status: nth === 2 || nth === 3 ? 500 : 200, delayMs: nth === 5 ? 1500 : 50 }));
      const created = await subscribe(space, { destination: target.url, config: { type: 'PER_TRANSACTION' } });
      for (let i = 0; i < 8; i++) await put(space, [point(`f${i % 3}`, i)]);
      await until('8 versions arrived', () => new Set(target.versions).size >= 8, 30_000);
      assertInOrder(target.versions, 8);
      assert.ok(target.received > 8, 'the failures were retried');
      await until('the status is clear', async () => {
        const now = await status(space, created.body.id as string);
        return now.deliveredVersion === 7 && now.lastError === undefined && now.retries === 0;
      });
    });

    test('SUSPENDED after the retry limit with the last error; PUT status.state ACTIVE resumes', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      let failing = true;
      const target = await receiver(() => ({ status: failing ? 503 : 200 }));
      const created = await subscribe(space, { id: 'sus', destination: target.url, config: { type: 'PER_TRANSACTION' } });
      const secret = created.body.secret as string;
      await put(space, [point('A', 1)]);
      await until('suspended', async () => (await status(space, 'sus')).state === 'SUSPENDED');
      const suspended = await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/sus`);
      const now = suspended.body.status as Record<string, unknown>;
      assert.equal(now.retries, 4);
      assert.match(String(now.lastError), /version 0 failed: the destination answered 503.*Suspended after 4 failed attempts/);
      assert.ok(!suspended.text.includes(secret));
      assert.equal(target.received, 4);
      await put(space, [point('B', 2)]);
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(target.received, 4, 'a suspended subscription sends nothing');
      failing = false;
      const resumed = await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/sus`,
        { body: { destination: target.url, config: { type: 'PER_TRANSACTION' }, status: { state: 'ACTIVE' } } });
      assert.equal(resumed.status, 200, resumed.text);
      await until('both versions arrived', () => target.deliveries.length >= 2);
      assert.deepEqual(target.versions, [0, 1]);
      assert.ok(signatureValid(target.deliveries[0], secret), 'the secret survives a PUT');
    });

    test('PUT SUSPENDED stops a catch-up within a version; ACTIVE goes on from there', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      const target = await receiver(() => ({ status: 200, delayMs: 100 }));
      const body = { destination: target.url, config: { type: 'PER_TRANSACTION' } };
      await subscribe(space, { ...body, id: 'stop', status: { state: 'SUSPENDED' } });
      for (let i = 0; i < 20; i++) await put(space, [point('A', i)]);
      await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/stop`, { body: { ...body, status: { state: 'ACTIVE' } } });
      await until('3 versions arrived', () => target.deliveries.length >= 3);
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/stop`, { body: { ...body, status: { state: 'SUSPENDED' } } })).status, 200);
      const atSuspension = target.received;
      await new Promise((resolve) => setTimeout(resolve, 600));
      assert.ok(target.received <= atSuspension + 1, `${target.received - atSuspension} POSTs after the suspension`);
      assert.equal((await status(space, 'stop')).state, 'SUSPENDED');
      await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/stop`, { body: { ...body, status: { state: 'ACTIVE' } } });
      await until('20 versions arrived', () => new Set(target.versions).size >= 20);
      assertInOrder(target.versions, 20);
    });

    test('a receiver that restarts; one down past the retry limit resumes by PUT, its undelivered history kept from pruning', async () => {
      // Two versions kept: pruning would remove the older versions while the receiver is down, but the subscription pins them.
      const space = await createSpace(hub, { versionsToKeep: 2 });
      const target = await receiver();
      await subscribe(space, { id: 'rs', destination: target.url, config: { type: 'PER_TRANSACTION' } });
      await put(space, [point('A', 0)]);
      await until('version 0 arrived', () => target.deliveries.length === 1);
      const port = target.port;
      // Down for less than the retries take: delivery goes on by itself.
      await target.stop();
      await put(space, [point('A', 1)]);
      await until('an attempt failed', async () => /could not be reached \(ECONNREFUSED\)/.test(String((await status(space, 'rs')).lastError)));
      await target.start(port);
      await until('version 1 arrived', () => target.versions.includes(1));
      // Down past the retry limit, while pruning runs (500 ms after the writes).
      await target.stop();
      for (let i = 2; i < 8; i++) await put(space, [point('A', i)]);
      await until('suspended', async () => (await status(space, 'rs')).state === 'SUSPENDED');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // The versions read from outside stay as versionsToKeep says.
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/changesets/3`)).status, 400);
      await target.start(port);
      const resumed = await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/rs`,
        { body: { destination: target.url, config: { type: 'PER_TRANSACTION' }, status: { state: 'ACTIVE' } } });
      assert.equal(resumed.status, 200, resumed.text);
      await until('8 versions arrived', () => new Set(target.versions).size >= 8);
      assertInOrder(target.versions, 8);
      assert.equal((await status(space, 'rs')).lastError, undefined);
    });

    test('rights: 401 without a token, 403 without manageSpaces (and readFeatures to create), nothing changed', async () => {
      const alice = await issueToken(hub, { aid: 'alice-sub', urm: ownerRights('alice-sub') });
      const bob = await issueToken(hub, { aid: 'bob-sub', urm: ownerRights('bob-sub') });
      const manager = await issueToken(hub, { aid: 'mgr-sub', urm: { 'xyz-hub': { manageSpaces: [{ owner: 'alice-sub' }] } } });
      const reader = await issueToken(hub, { aid: 'reader-sub', urm: { 'xyz-hub': { readFeatures: [{ owner: 'alice-sub' }] } } });
      const made = await call(hub, 'POST', '/hub/spaces', { body: { title: 'alice', versionsToKeep: 5 }, headers: { authorization: `Bearer ${alice.token}` } });
      assert.equal(made.status, 200, made.text);
      const space = made.body.id as string;
      const target = await receiver();
      const body = { id: 'a', destination: target.url, config: { type: 'PER_FEATURE' } };
      assert.equal((await subscribe(space, body, alice.token)).status, 200);
      const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
      const path = `/hub/spaces/${space}/subscriptions`;
      assert.equal((await call(hub, 'GET', path, { anonymous: true })).status, 401);
      assert.equal((await call(hub, 'POST', path, { anonymous: true, body })).status, 401);
      for (const token of [bob.token, reader.token]) {
        assertError(await call(hub, 'GET', path, as(token)), 403, 'insufficientRights');
        assertError(await call(hub, 'GET', `${path}/a`, as(token)), 403, 'insufficientRights');
        assertError(await call(hub, 'POST', path, { ...as(token), body: { ...body, id: 'b' } }), 403, 'insufficientRights');
        assertError(await call(hub, 'PUT', `${path}/a`, { ...as(token), body }), 403, 'insufficientRights');
        assertError(await call(hub, 'DELETE', `${path}/a`, as(token)), 403, 'insufficientRights');
      }
      // manageSpaces alone lists and deletes, but may not send the space's features elsewhere.
      assert.equal((await call(hub, 'GET', path, as(manager.token))).status, 200);
      assertError(await call(hub, 'POST', path, { ...as(manager.token), body: { ...body, id: 'b' } }), 403, 'insufficientRights', 'readFeatures');
      const left = await call(hub, 'GET', path, as(alice.token));
      assert.deepEqual((left.body as unknown as Array<{ id: string }>).map((entry) => entry.id), ['a']);
      assert.equal((await call(hub, 'DELETE', `${path}/a`, as(manager.token))).status, 200);
      assertError(await call(hub, 'GET', `${path}/a`, as(alice.token)), 404, 'subscriptionNotFound');
    });

    test('delivery goes on only while the token that made the subscription may read the space: deleted, expired or narrowed, it is suspended', async () => {
      const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
      const cases = [
        { name: 'deleted', problem: /was deleted or has expired/ },
        { name: 'expired', problem: /was deleted or has expired/ },
        { name: 'narrowed', problem: /no longer has manageSpaces and readFeatures/ },
      ];
      await Promise.all(cases.map(async ({ name, problem }) => {
        const space = await createSpace(hub, { versionsToKeep: 10, packages: ['pkg-wall'] });
        const rights = { manageSpaces: [{ packages: 'pkg-wall' }], readFeatures: [{ packages: 'pkg-wall' }] };
        const exp = name === 'expired' ? Math.floor(Date.now() / 1000) + 3 : undefined;
        const other = await issueToken(hub, { aid: `wall-${name}`, urm: { 'xyz-hub': rights }, exp });
        const target = await receiver();
        const body = { id: 'w', destination: target.url, config: { type: 'PER_TRANSACTION' } };
        assert.equal((await subscribe(space, body, other.token)).status, 200);
        await put(space, [point('A', 1)]);
        await until(`${name}: version 0 arrived`, () => target.versions.includes(0));
        if (name === 'deleted') await deleteStoredToken(hub, other.tid);
        if (name === 'expired') await new Promise((resolve) => setTimeout(resolve, (exp! + 1) * 1000 - Date.now()));
        if (name === 'narrowed') assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { packages: ['pkg-other'] } })).status, 200);
        await put(space, [point('B', 2)]);
        await until(`${name}: suspended`, async () => (await status(space, 'w')).state === 'SUSPENDED', 10_000);
        const now = await status(space, 'w');
        assert.match(String(now.lastError), problem);
        assert.equal(now.deliveredVersion, 0);
        await new Promise((resolve) => setTimeout(resolve, 300));
        assert.deepEqual(target.versions, [0], `${name}: nothing after version 0 was sent`);
        // The owner (here the admin) takes it over: delivery goes on in its name, from where it stopped.
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/w`, { body: { ...body, status: { state: 'ACTIVE' } } })).status, 200);
        await until(`${name}: version 1 arrived`, () => target.versions.includes(1));
        if (name !== 'deleted') assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/w`, as(other.token))).status, name === 'expired' ? 401 : 403);
      }));
    });

    test('ids the hub makes up are ids it takes back: 90 subscriptions without one, each readable by its id', async () => {
      const space = await createSpace(hub, { versionsToKeep: 2 });
      const body = { destination: 'http://127.0.0.1:9/hook', config: { type: 'CONTENT_CHANGE' }, status: { state: 'SUSPENDED' } };
      const ids = await Promise.all(Array.from({ length: 90 }, async () => {
        const created = await subscribe(space, body);
        assert.equal(created.status, 200, created.text);
        return created.body.id as string;
      }));
      for (const id of ids) {
        assert.match(id, /^[A-Za-z0-9]{12}$/);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/${id}`)).status, 200, id);
      }
    });

    test('bad input: clear 400s (404, 409), and nothing is created', async () => {
      const plain = await createSpace(hub);
      const space = await createSpace(hub, { versionsToKeep: 3 });
      const ok = { destination: 'http://127.0.0.1:9/hook', config: { type: 'PER_FEATURE' } };
      assertError(await subscribe(plain, ok), 400, 'subscriptionNeedsHistory', 'versionsToKeep');
      const cases: Array<[object, string]> = [
        [{ ...ok, destination: 'ftp://example.org/x' }, 'http or https'],
        [{ ...ok, destination: 'not a url' }, 'not a URL'],
        [{ ...ok, destination: 'https://user:secret@example.org/x' }, 'user name or password'],
        [{ ...ok, destination: `https://example.org/${'x'.repeat(2100)}` }, 'at most 2000'],
        [{ destination: ok.destination }, 'config must be an object'],
        [{ ...ok, config: { type: 'SOMETIMES' } }, 'PER_FEATURE, PER_TRANSACTION, CONTENT_CHANGE'],
        [{ ...ok, filter: { jsonPath: '$.features[?(@.a ==' } }, 'does not parse'],
        // Run on every delivered version: a catastrophic regular expression held the node's event loop for hours.
        [{ ...ok, filter: { jsonPath: '$.features[?(@.properties.name.match(/^(a+)+$/))]' } }, 'cannot call methods or hold regular expressions'],
        [{ ...ok, filter: { jsonPath: '$.features[?(@.properties.name.padStart(500000000))]' } }, 'cannot call methods or hold regular expressions'],
        [{ ...ok, filter: { jsonPath: '$.features[*].properties.x[?(@.a ==)]' } }, 'does not parse'],
        [{ ...ok, filter: { jsonPath: 'features' } }, 'starting with $'],
        [{ ...ok, filter: { geometry: { type: 'Point', coordinates: [200, 0] } } }, 'filter.geometry'],
        [{ ...ok, filter: { geometry: { type: 'Point', coordinates: [0, 0] }, radius: -1 } }, 'filter.radius'],
        [{ ...ok, filter: { radius: 5 } }, 'needs a filter.geometry'],
        [{ ...ok, filter: { where: 1 } }, 'unknown members'],
        [{ ...ok, id: 'bad id!' }, 'id must be'],
        [{ ...ok, status: { state: 'PAUSED' } }, 'status.state'],
        [{ ...ok, secret: 'mine' }, 'unknown members "secret"'],
      ];
      for (const [body, part] of cases) assertError(await subscribe(space, body), 400, 'invalidSubscription', part);
      const notJson = await call(hub, 'POST', `/hub/spaces/${space}/subscriptions`, { rawBody: '{"destination":', headers: { 'content-type': 'application/json' } });
      assert.equal(notJson.status, 400, notJson.text);
      assert.deepEqual((await call(hub, 'GET', `/hub/spaces/${space}/subscriptions`)).body, []);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/nope`), 404, 'subscriptionNotFound');
      assertError(await call(hub, 'DELETE', `/hub/spaces/${space}/subscriptions/a%00b`), 404, 'subscriptionNotFound');
      assertError(await call(hub, 'PUT', `/hub/spaces/${space}/subscriptions/nope`, { body: ok }), 404, 'subscriptionNotFound');
      assert.equal((await call(hub, 'GET', '/hub/spaces/no-such-space/subscriptions')).status, 404);
      assert.equal((await subscribe(space, { ...ok, id: 'twice' })).status, 200);
      assertError(await subscribe(space, { ...ok, id: 'twice' }), 409, 'subscriptionExists');
    });

    test('a destination on a private address is refused unless the operator allows it', async () => {
      const strict = await startHub({ backend });
      try {
        const space = await createSpace(strict, { versionsToKeep: 2 });
        // IPv6 addresses carrying a private IPv4 one: NAT64 (an IPv6-only network with NAT64 delivers the second to the
        // cloud's metadata service), IPv4-compatible, 6to4; and site-local.
        const carried = ['http://[64:ff9b::7f00:1]/x', 'http://[64:ff9b::169.254.169.254]/latest', 'http://[::127.0.0.1]/x', 'http://[2002:a01:203::1]/x', 'http://[fec0::1]/x'];
        for (const destination of ['http://127.0.0.1:8080/x', 'http://localhost/x', 'http://[::1]/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest', 'http://[::ffff:127.0.0.1]/x', ...carried]) {
          const response = await call(strict, 'POST', `/hub/spaces/${space}/subscriptions`, { body: { destination, config: { type: 'PER_FEATURE' } } });
          assertError(response, 400, 'invalidSubscription', 'HUB_ALLOW_PRIVATE_WEBHOOKS');
        }
      } finally {
        await strict.stop();
      }
    });

    test('two nodes on one database: each version is delivered by one of them, once', async () => {
      const second = await startHub(backend === 'postgres' ? { backend, env: ENV, storage: hub.storage } : { backend, env: ENV, dataDir: hub.dataDir });
      try {
        const space = await createSpace(hub, { versionsToKeep: 100 });
        const target = await receiver(() => ({ status: 200, delayMs: 20 }));
        await subscribe(space, { id: 'two', destination: target.url, config: { type: 'PER_TRANSACTION' } });
        // Written through both nodes, while both poll.
        for (let i = 0; i < 20; i++) {
          const node = i % 2 === 0 ? hub : second;
          assert.equal((await call(node, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [point('A', i)] } })).status, 200);
        }
        await until('20 versions arrived', () => target.deliveries.length >= 20);
        await new Promise((resolve) => setTimeout(resolve, 500));
        assert.deepEqual(target.versions, Array.from({ length: 20 }, (_, index) => index), 'each version once, in order');
      } finally {
        await second.stop({ keepData: true });
      }
    });

    test('kill -9 mid-delivery and a restart on the same database: nothing is lost, order kept', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      const target = await receiver(() => ({ status: 200, delayMs: 60 }));
      await subscribe(space, { id: 'k', destination: target.url, config: { type: 'PER_TRANSACTION' } });
      for (let i = 0; i < 30; i++) await put(space, [point(`f${i}`, i % 90)]);
      await until('some versions arrived', () => target.deliveries.length >= 5);
      await hub.kill();
      const before = target.deliveries.length;
      assert.ok(before < 30, `the kill came mid-delivery (${before} delivered)`);
      hub = await startHub({ backend, env: ENV, dataDir: hub.dataDir });
      await until('30 versions arrived', () => new Set(target.versions).size >= 30, 30_000);
      assertInOrder(target.versions, 30);
      await until('the status says version 29', async () => (await status(space, 'k')).deliveredVersion === 29);
    });
  });
}
