// Crash durability of space writes: a space created, changed (title, sharing, readOnly, processors, layers) or deleted with a 2xx is so after a kill -9 right after the answer.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, point } from '../helpers/features.js';
import { crashAndRestart } from '../helpers/crash.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { openStorage } from '../../src/storage/open-storage.js';

const logListener = { 'activity-log': [{ params: { states: 5, storageMode: 'FULL' }, eventTypes: ['ModifySpaceEvent.request'] }] };
const validator = { id: 'schema-validator', params: { schema: { type: 'object', required: ['properties'], properties: { properties: { type: 'object', required: ['name'] } } } } };
const tagger = { id: 'rule-tagger', params: { taggingRules: { large: '$.features[?(@.properties.area>=100)]' } } };

function ok(response: TestResponse, status = 200): TestResponse {
  assert.equal(response.status, status, response.text);
  return response;
}

for (const backend of BACKENDS) {
  describe(`durability of space writes across kill -9 (${backend})`, () => {
    let hub: HubProcess;
    /** The spaces as the last 2xx before the crash answered them. */
    const answered = new Map<string, Record<string, unknown>>();
    let created = '';
    let patched = '';
    let processed = '';
    let base = '';
    let composite = '';
    const deleted = 'gone-after-crash';

    before(async () => {
      hub = await startHub({ backend });
      created = await createSpace(hub, { title: 'created', description: 'as created', versionsToKeep: 5, shared: true, license: 'MIT' });
      answered.set(created, ok(await call(hub, 'GET', `/hub/spaces/${created}`)).body);

      patched = await createSpace(hub, { title: 'before patch' });
      ok(await call(hub, 'PUT', `/hub/spaces/${patched}/features`, { body: collection(point('p1')) }));
      answered.set(patched, ok(await call(hub, 'PATCH', `/hub/spaces/${patched}`, { body: { title: 'after patch', shared: true, readOnly: true, client: { a: 1 } } })).body);

      processed = await createSpace(hub, { title: 'processors added later' });
      answered.set(processed, ok(await call(hub, 'PATCH', `/hub/spaces/${processed}`, { body: { processors: [validator, tagger] } })).body);

      base = await createSpace(hub, { title: 'base layer' });
      ok(await call(hub, 'PUT', `/hub/spaces/${base}/features`, { body: collection(point('in-base', { layer: 'base' })) }));
      composite = await createSpace(hub, { title: 'composite', extends: { spaceId: base } });
      ok(await call(hub, 'PUT', `/hub/spaces/${composite}/features`, { body: collection(point('in-top', { layer: 'top' })) }));
      answered.set(composite, ok(await call(hub, 'GET', `/hub/spaces/${composite}`)).body);

      ok(await call(hub, 'POST', '/hub/spaces', { body: { id: deleted, title: 'to delete' } }));
      ok(await call(hub, 'PUT', `/hub/spaces/${deleted}/features`, { body: collection(point('old-1', { old: true }), point('old-2', { old: true })) }));
      ok(await call(hub, 'DELETE', `/hub/spaces/${deleted}`), 204);

      hub = await crashAndRestart(hub);
    });
    after(() => hub.stop());

    test('a created space is there with every member as answered', async () => {
      assert.deepEqual(ok(await call(hub, 'GET', `/hub/spaces/${created}`)).body, answered.get(created));
    });

    test('a patched space keeps the patch: title, sharing, client, and readOnly still refuses feature writes', async () => {
      const space = ok(await call(hub, 'GET', `/hub/spaces/${patched}`)).body;
      assert.deepEqual(space, answered.get(patched));
      assert.equal(space.title, 'after patch');
      assert.equal(space.readOnly, true);
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${patched}/features`, { body: collection(point('p2')) })).status, 405);
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${patched}/count`)).body.count, 1);
    });

    test('processors added by a patch still validate and tag writes', async () => {
      assert.deepEqual(ok(await call(hub, 'GET', `/hub/spaces/${processed}`)).body, answered.get(processed));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${processed}/features`, { body: collection(point('nameless', { area: 5 })) })).status, 400);
      ok(await call(hub, 'PUT', `/hub/spaces/${processed}/features`, { body: collection(point('big', { name: 'big', area: 500 })) }));
      const big = ok(await call(hub, 'GET', `/hub/spaces/${processed}/features/big`)).body;
      assert.deepEqual(namespaceOf(big as never).tags, ['large']);
    });

    test('a composite space still reads through to its base', async () => {
      assert.deepEqual(ok(await call(hub, 'GET', `/hub/spaces/${composite}`)).body, answered.get(composite));
      const ids = (ok(await call(hub, 'GET', `/hub/spaces/${composite}/iterate`)).body.features ?? []).map((feature) => feature.id).sort();
      assert.deepEqual(ids, ['in-base', 'in-top']);
    });

    test('a deleted space stays deleted, its features unreadable, and its id can be taken by a new, empty space', async () => {
      assert.equal((await call(hub, 'GET', `/hub/spaces/${deleted}`)).status, 404);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${deleted}/features/old-1`)).status, 404);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${deleted}/iterate`)).status, 404);
      const listed = ok(await call(hub, 'GET', '/hub/spaces')).body as unknown as Array<{ id: string }>;
      assert.ok(!listed.some((space) => space.id === deleted));
      ok(await call(hub, 'POST', '/hub/spaces', { body: { id: deleted, title: 'the id again' } }));
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${deleted}/count`)).body.count, 0);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${deleted}/features/old-1`)).status, 404);
      assert.deepEqual(ok(await call(hub, 'GET', `/hub/spaces/${deleted}/statistics`)).body.count, { value: 0, estimated: false });
    });
  });
}

for (const backend of BACKENDS) {
  describe(`a space delete cut between its two commits (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(() => hub.stop());

    /** Deletes one space row as one commit of a request cut by a crash would have (space-service.ts create and delete). */
    async function deleteOnly(id: string): Promise<void> {
      const storage = await openStorage(hub.storage, { pgPoolSize: 1 });
      try {
        assert.ok(await storage.spaces.delete(id));
      } finally {
        await storage.close();
      }
    }

    test('the id takes a new logged space again, whose log starts empty: the old log is not taken over', async () => {
      const id = 'logged-then-cut';
      ok(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'first', enableUUID: true, listeners: logListener } }));
      ok(await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: collection(point('secret', { old: true })) }));
      // What a crash after the space's own delete committed and before its log space's did leaves.
      await deleteOnly(id);
      hub = await crashAndRestart(hub);

      ok(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'second', enableUUID: true, listeners: logListener } }));
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${id}-activity-log/count`)).body.count, 0);
      ok(await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: collection(point('new')) }));
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${id}-activity-log/count`)).body.count, 1);
    });

    test('a space given the log listener by a patch does not take over the log its id had before', async () => {
      const id = 'patched-then-cut';
      ok(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'first', enableUUID: true, listeners: logListener } }));
      ok(await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: collection(point('secret', { old: true })) }));
      // What a crash after the space's own delete committed and before its log space's did leaves.
      await deleteOnly(id);
      hub = await crashAndRestart(hub);

      ok(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'second', enableUUID: true } }));
      ok(await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { listeners: logListener } }));
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${id}-activity-log/count`)).body.count, 0);
    });

    test('a logged space whose create was cut before its log space committed refuses writes until a patch sets the listener again', async () => {
      const id = 'created-then-cut';
      ok(await call(hub, 'POST', '/hub/spaces', { body: { id, title: 'logged', enableUUID: true, listeners: logListener } }));
      await deleteOnly(`${id}-activity-log`);
      hub = await crashAndRestart(hub);

      const refused = await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: collection(point('unlogged')) });
      assert.equal(refused.body.code, 'activityLogMissing', refused.text);
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${id}/count`)).body.count, 0, 'nothing unlogged is written');
      ok(await call(hub, 'PATCH', `/hub/spaces/${id}`, { body: { listeners: logListener } }));
      ok(await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: collection(point('logged')) }));
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${id}-activity-log/count`)).body.count, 1);
    });
  });
}
