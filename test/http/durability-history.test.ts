// Crash durability of history: versions, merges, tags, pruning, the activity log and a subscription's delivered position agree after a kill -9 right after the last answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { collection, point } from '../helpers/features.js';
import { crashAndRestart } from '../helpers/crash.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { until, WebhookReceiver } from '../helpers/webhook-receiver.js';

const NS = '@ns:com:here:xyz';
// A short lease: the killed process's lease must expire before the restarted one delivers (docs/subscriptions.md).
const ENV = { HUB_ALLOW_PRIVATE_WEBHOOKS: 'true', HUB_SUBSCRIPTION_POLL: '100ms', HUB_SUBSCRIPTION_LEASE: '2s', HUB_SUBSCRIPTION_BACKOFF: '100ms', HUB_WEBHOOK_TIMEOUT: '1s' };

function ok(response: TestResponse, status = 200): TestResponse {
  assert.equal(response.status, status, response.text);
  return response;
}

for (const backend of BACKENDS) {
  describe(`durability of history across kill -9 (${backend})`, () => {
    let hub: HubProcess;
    let receiver: WebhookReceiver;
    let versioned = '';
    let pruned = '';
    let logged = '';
    let subscribed = '';
    /** What the hub answered before the crash, read again after it. */
    const before_: Record<string, unknown> = {};

    const put = (space: string, ...features: object[]) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...features) });
    const tags = (space: string, suffix = '', method = 'GET', body?: object) => call(hub, method, `/hub/spaces/${space}/tags${suffix}`, { body });
    /** HEAD as the 400 for a version past it names it. */
    async function head(space: string): Promise<number> {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/search?version=999999999`);
      const match = /HEAD is (-?\d+)/.exec(String(response.body.errorMessage));
      assert.ok(match, response.text);
      return Number(match[1]);
    }
    const readAt = async (space: string, version: number) => ok(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=${version}`)).body;
    const logCount = async (space: string) => (ok(await call(hub, 'GET', `/hub/spaces/${space}-activity-log/iterate?limit=1000`)).body.features ?? []).length;
    const deliveredOf = async (space: string) =>
      (ok(await call(hub, 'GET', `/hub/spaces/${space}/subscriptions/sub`)).body.status as { deliveredVersion: number }).deliveredVersion;

    before(async () => {
      receiver = await new WebhookReceiver().start();
      hub = await startHub({ backend, env: ENV });

      // Versions 0-3: a write, an update, a merge of a feature read at version 0, a delete.
      versioned = await createSpace(hub, { versionsToKeep: 20 });
      ok(await put(versioned, point('a', { name: 'x', n: 0 }), point('b')));
      ok(await put(versioned, point('a', { name: 'x', n: 1 })));
      ok(await call(hub, 'POST', `/hub/spaces/${versioned}/features`, { body: collection(point('a', { name: 'merged', [NS]: { version: 0 } })) }));
      ok(await call(hub, 'DELETE', `/hub/spaces/${versioned}/features/b`), 204);
      ok(await tags(versioned, '', 'POST', { id: 'release', version: 1 }));
      ok(await tags(versioned, '', 'POST', { id: 'moved', version: 0 }));
      ok(await tags(versioned, '/moved', 'PATCH', { version: 2, description: 'moved to 2' }));
      ok(await tags(versioned, '', 'POST', { id: 'dropped' }));
      ok(await tags(versioned, '/dropped', 'DELETE'));
      before_.head = await head(versioned);
      before_.changesets = ok(await call(hub, 'GET', `/hub/spaces/${versioned}/changesets`)).body;
      before_.tags = ok(await tags(versioned)).body;
      before_.atOne = await readAt(versioned, 1);
      before_.atTwo = await readAt(versioned, 2);

      pruned = await createSpace(hub, { versionsToKeep: 100 });
      for (let n = 0; n < 6; n++) ok(await put(pruned, point('a', { n })));
      ok(await call(hub, 'DELETE', `/hub/spaces/${pruned}/changesets?version=lt=4`), 204);

      logged = await createSpace(hub, { enableUUID: true, listeners: { 'activity-log': [{ params: { states: 5, storageMode: 'FULL' }, eventTypes: ['ModifySpaceEvent.request'] }] } });
      for (let n = 0; n < 3; n++) ok(await put(logged, point('a', { n }), point(`new-${n}`)));
      ok(await call(hub, 'DELETE', `/hub/spaces/${logged}/features/new-0`), 204);
      before_.logCount = await logCount(logged);

      subscribed = await createSpace(hub, { versionsToKeep: 20 });
      ok(await call(hub, 'POST', `/hub/spaces/${subscribed}/subscriptions`, { body: { id: 'sub', destination: receiver.url, config: { type: 'PER_TRANSACTION' } } }));
      for (let n = 0; n < 3; n++) ok(await put(subscribed, point('a', { n })));
      await until('the delivery of version 2 is recorded', async () => (await deliveredOf(subscribed)) === 2);

      hub = await crashAndRestart(hub, { env: ENV });
    });
    after(async () => {
      await hub.stop();
      await receiver.stop();
    });

    test('HEAD, the changesets, reads at a version and the tags are what was answered', async () => {
      assert.equal(await head(versioned), before_.head);
      assert.equal(before_.head, 3);
      assert.deepEqual(ok(await call(hub, 'GET', `/hub/spaces/${versioned}/changesets`)).body, before_.changesets);
      assert.deepEqual(await readAt(versioned, 1), before_.atOne);
      assert.deepEqual(await readAt(versioned, 2), before_.atTwo);
      assert.equal((before_.atTwo as { properties: { name: string; n: number } }).properties.name, 'merged');
      assert.deepEqual(ok(await tags(versioned)).body, before_.tags);
      assert.deepEqual((before_.tags as Array<{ id: string; version: number }>).map((tag) => [tag.id, tag.version]), [['moved', 2], ['release', 1]]);
      assert.equal((await tags(versioned, '/dropped')).status, 404);
    });

    test('the next write takes the next version: none is reused', async () => {
      ok(await put(versioned, point('a', { name: 'after the crash' })));
      assert.equal(await head(versioned), 4);
      assert.equal(((await readAt(versioned, 3)) as { properties: { name: string } }).properties.name, 'merged');
      const changesets = ok(await call(hub, 'GET', `/hub/spaces/${versioned}/changesets`)).body.versions as Record<string, unknown>;
      assert.deepEqual(Object.keys(changesets), ['0', '1', '2', '3', '4']);
    });

    test('pruned versions stay unreadable and the statistics name the kept range', async () => {
      assert.equal((await call(hub, 'GET', `/hub/spaces/${pruned}/features/a?version=3`)).status, 400);
      assert.equal((ok(await call(hub, 'GET', `/hub/spaces/${pruned}/features/a?version=4`)).body.properties as { n: number }).n, 4);
      const statistics = ok(await call(hub, 'GET', `/hub/spaces/${pruned}/statistics`)).body;
      assert.deepEqual([statistics.minVersion, statistics.maxVersion], [{ value: 4, estimated: false }, { value: 5, estimated: false }]);
    });

    test('the activity log holds one entry per logged change, as before the crash', async () => {
      assert.equal(before_.logCount, 7);
      assert.equal(await logCount(logged), before_.logCount);
    });

    test('a subscription goes on after its recorded position: nothing delivered twice, the next version delivered', async () => {
      assert.equal(await deliveredOf(subscribed), 2);
      ok(await put(subscribed, point('a', { n: 3 })));
      await until('version 3 arrived', () => receiver.versions.includes(3));
      await until('the delivery of version 3 is recorded', async () => (await deliveredOf(subscribed)) === 3);
      assert.deepEqual(receiver.versions, [0, 1, 2, 3]);
    });
  });
}
