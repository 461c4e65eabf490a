// Black-box tests of tags naming versions (ADR 002, issue 23 part 3): CRUD, refusals, use wherever a version is, kept by pruning, rights; on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { prunedTo } from '../helpers/history-rows.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { ...properties, [NS]: { tags: [] } } });
const ids = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);
const nOf = (response: TestResponse): unknown => (response.body.properties as Record<string, unknown> | undefined)?.n;

for (const backend of BACKENDS) {
  describe(`version tags (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, features: object[]) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
    const tags = (space: string, path = '', method = 'GET', body?: unknown, headers?: Record<string, string>) =>
      call(hub, method, `/hub/spaces/${space}/tags${path}`, { body, headers });

    /** Versions 0-3: a=0 b | a=1 | a=2 | a=3. */
    async function history(keep = 10): Promise<string> {
      const space = await createSpace(hub, { versionsToKeep: keep });
      await put(space, [point('a', { n: 0 }), point('b', { n: 0 })]);
      for (let n = 1; n < 4; n++) await put(space, [point('a', { n })]);
      return space;
    }

    test('create, list, read, move, describe and delete a tag', async () => {
      const space = await history();
      const head = await tags(space, '', 'POST', { id: 'release' });
      assert.equal(head.status, 200, head.text);
      assert.equal(head.body.id, 'release');
      assert.equal(head.body.version, 3);
      assert.equal(typeof head.body.author, 'string');
      assert.ok(Math.abs((head.body.createdAt as number) - Date.now()) < 60_000);
      const first = await tags(space, '', 'POST', { id: 'first', version: 0, description: 'the first write', author: 'ignored', createdAt: 1 });
      assert.equal(first.status, 200, first.text);
      assert.deepEqual([first.body.version, first.body.description, first.body.author], [0, 'the first write', head.body.author]);
      const list = await tags(space);
      assert.equal(list.status, 200, list.text);
      assert.deepEqual((list.body as unknown as Array<Record<string, unknown>>).map((tag) => [tag.id, tag.version]), [['first', 0], ['release', 3]]);
      assert.deepEqual((await tags(space, '/first')).body, first.body);

      const moved = await tags(space, '/first', 'PATCH', { version: 1 });
      assert.equal(moved.status, 200, moved.text);
      assert.deepEqual([moved.body.version, moved.body.description], [1, 'the first write']);
      const described = await tags(space, '/first', 'PATCH', { description: 'now at 1' });
      assert.deepEqual([described.body.version, described.body.description], [1, 'now at 1']);
      assert.deepEqual((await tags(space, '/first')).body, described.body);

      const deleted = await tags(space, '/first', 'DELETE');
      assert.equal(deleted.status, 200, deleted.text);
      assert.equal(deleted.body.id, 'first');
      assertError(await tags(space, '/first'), 404, 'tagNotFound');
      assertError(await tags(space, '/first', 'DELETE'), 404, 'tagNotFound');
      assertError(await tags(space, '/first', 'PATCH', { version: 2 }), 404, 'tagNotFound');
    });

    test('bad tags are refused with a 400 naming the problem, and change nothing', async () => {
      const space = await history(3);
      // Control characters: a NUL was stored on SQLite and answered 500 on PostgreSQL, also as a versionRef or in a tag's path.
      for (const id of ['1st', 'a b', 'a:b', 'HEAD', 'main', '*', 'x'.repeat(51), 'a..b', '', 7, 'a\u0000b', '\u0000', 'a\u0007']) {
        assertError(await tags(space, '', 'POST', { id }), 400, 'invalidTag');
      }
      for (const path of [`/hub/spaces/${space}/search?versionRef=a%00b`, `/hub/spaces/${space}/changesets/a%00b`, `/hub/spaces/${space}/changesets?versionRef=a%00b..HEAD`]) {
        assertError(await call(hub, 'GET', path), 400, 'invalidParameter', 'tag id');
      }
      for (const method of ['GET', 'PATCH', 'DELETE'] as const) assertError(await tags(space, '/a%00b', method, method === 'PATCH' ? {} : undefined), 404, 'tagNotFound');
      assertError(await tags(space, '', 'POST', {}), 400, 'invalidTag', 'needs an id');
      for (const version of [-1, 1.5, 'x', '2']) assertError(await tags(space, '', 'POST', { id: 'v', version }), 400, 'invalidTag', 'version');
      assertError(await tags(space, '', 'POST', { id: 'v', version: 4 }), 400, 'versionNotYet');
      assertError(await tags(space, '', 'POST', { id: 'v', version: 0 }), 400, 'versionTooOld', 'oldest version that can be read is 1');
      assertError(await tags(space, '', 'POST', { id: 'v', description: 'd'.repeat(255) }), 400, 'invalidTag', 'description');
      assertError(await tags(space, '', 'POST', { id: 'v', description: 5 }), 400, 'invalidTag', 'description');
      assertError(await tags(space, '', 'POST', [1]), 400, 'invalidJsonBody');
      assertError(await call(hub, 'POST', `/hub/spaces/${space}/tags`, { rawBody: '{"id":', headers: { 'content-type': 'application/json' } }), 400, 'invalidJsonBody');
      assert.deepEqual((await tags(space)).body, []);
      assert.equal((await tags(space, '', 'POST', { id: 'v', description: 'd'.repeat(254) })).status, 200);
      assertError(await tags(space, '', 'POST', { id: 'v' }), 409, 'tagExists');
      assertError(await tags(space, '/v', 'PATCH', { id: 'w' }), 400, 'invalidTag', 'differs');
      assertError(await tags(space, '/v', 'PATCH', { version: 0 }), 400, 'versionTooOld');
      assert.equal((await tags(space, '/v')).body.version, 3);
      const plain = await createSpace(hub);
      await put(plain, [point('a')]);
      assertError(await tags(plain, '', 'POST', { id: 'v' }), 400, 'noHistory');
      const composite = await createSpace(hub, { versionsToKeep: 5, extends: { spaceId: space } });
      assertError(await tags(composite, '', 'POST', { id: 'v' }), 400, 'historyOfLayers');
      assertError(await call(hub, 'GET', `/hub/spaces/${composite}/features/a?versionRef=v`), 400, 'historyOfLayers');
    });

    test('a tag is usable wherever a version is: reads, iterate, changesets', async () => {
      const space = await history();
      await tags(space, '', 'POST', { id: 'one', version: 1 });
      await tags(space, '', 'POST', { id: 'two', version: 2 });
      assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=one`)), 1);
      assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=two`)), 2);
      const search = await call(hub, 'GET', `/hub/spaces/${space}/search?version=one&p.n=1`);
      assert.deepEqual(ids(search), ['a']);
      const firstPage = await call(hub, 'GET', `/hub/spaces/${space}/iterate?versionRef=one&limit=1`);
      assert.deepEqual(ids(firstPage), ['a']);
      await put(space, [point('b', { n: 9 })]);
      const secondPage = await call(hub, 'GET', `/hub/spaces/${space}/iterate?versionRef=one&limit=1&handle=${firstPage.body.handle as string}`);
      assert.deepEqual([ids(secondPage), (secondPage.body.features ?? [])[0]?.properties.n], [['b'], 0]);
      const range = await call(hub, 'GET', `/hub/spaces/${space}/changesets?versionRef=one..two`);
      assert.equal(range.status, 200, range.text);
      assert.deepEqual(Object.keys(range.body.versions as object), ['2']);
      const changeset = await call(hub, 'GET', `/hub/spaces/${space}/changesets/two`);
      assert.equal(changeset.body.version, 2);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=missing`), 400, 'unknownVersionTag', 'missing');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/changesets?versionRef=missing..two`), 400, 'unknownVersionTag');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=a%20b`), 400, 'invalidParameter');
    });

    test('pruning keeps what a tagged version shows, until the tag goes; DELETE /changesets keeps it too', async () => {
      const space = await createSpace(hub, { versionsToKeep: 2 });
      await put(space, [point('a', { n: 0 }), point('b', { n: 0 })]);
      assert.equal((await tags(space, '', 'POST', { id: 'start', version: 0 })).status, 200);
      for (let n = 1; n < 6; n++) await put(space, [point('a', { n })]);
      // Oldest kept: 4. The tag keeps a's state of 0 (ended at 1); those ended at 2 and 3 go.
      const readsAtStart = async () => {
        assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=start`)), 0);
        assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=0`)), 0);
        assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/iterate?versionRef=start`)), ['a', 'b']);
      };
      await prunedTo(hub, space, { states: 3, versions: 2 });
      await readsAtStart();
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=1`), 400, 'versionTooOld', 'oldest version that can be read is 4');
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/changesets?version=lt=5`)).status, 204);
      await prunedTo(hub, space, { states: 2, versions: 1 });
      await readsAtStart();
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=4`), 400, 'versionTooOld', 'oldest version that can be read is 5');
      // Without the tag, its version is gone: at once for reads, and its states are pruned.
      assert.equal((await tags(space, '/start', 'DELETE')).status, 200);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=0`), 400, 'versionTooOld', 'oldest version that can be read is 5');
      await prunedTo(hub, space, { states: 1, versions: 1 });
      assert.equal((await tags(space, '', 'POST', { id: 'start', version: 0 })).status, 400);
    });

    test('a tag before a write without history cannot be read, and its states go at the next pruning', async () => {
      const space = await createSpace(hub, { versionsToKeep: 5 });
      await put(space, [point('a', { n: 0 })]);
      assert.equal((await tags(space, '', 'POST', { id: 'old', version: 0 })).status, 200);
      await put(space, [point('a', { n: 1 })]);
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { versionsToKeep: 1 } })).status, 200);
      // Still readable by its tag: nothing was written without history since.
      await prunedTo(hub, space, { states: 1, versions: 0 });
      assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=old`)), 0);
      await put(space, [point('a', { n: 2 })]);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=old`), 400, 'versionTooOld', 'oldest version that can be read is 2');
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { versionsToKeep: 1 } })).status, 200);
      await prunedTo(hub, space, { states: 0, versions: 0 });
    });

    test('reading tags needs readFeatures, writing them manageSpaces; a caller without learns nothing', async () => {
      const space = await history();
      await tags(space, '', 'POST', { id: 'secret-tag', version: 1, description: 'classified' });
      const outsider = await issueToken(hub, { aid: 'tags-outsider', urm: ownerRights('tags-outsider') });
      const reader = await issueToken(hub, { aid: 'tags-reader', urm: { 'xyz-hub': { readFeatures: [{}] } } });
      const as = (token: string) => ({ authorization: `Bearer ${token}` });
      const attempts: Array<[string, string, unknown]> = [['GET', '', undefined], ['GET', '/secret-tag', undefined], ['GET', '/nothing', undefined],
        ['POST', '', { id: 'mine' }], ['PATCH', '/secret-tag', { version: 2 }], ['DELETE', '/secret-tag', undefined]];
      for (const [method, path, body] of attempts) {
        const response = await tags(space, path, method, body, as(outsider.token));
        assertError(response, 403, 'insufficientRights');
        assert.ok(!response.text.includes('classified') && !response.text.includes('"version"'), `${method} ${path}: ${response.text}`);
      }
      const leak = await call(hub, 'GET', `/hub/spaces/${space}/features/a?versionRef=secret-tag`, { headers: as(outsider.token) });
      assertError(leak, 403, 'insufficientRights');
      assert.equal((await tags(space, '/secret-tag', 'GET', undefined, as(reader.token))).body.description, 'classified');
      for (const [method, path, body] of attempts.filter(([method]) => method !== 'GET')) {
        assertError(await tags(space, path, method, body, as(reader.token)), 403, 'insufficientRights');
      }
      assert.equal((await tags(space, '/secret-tag')).body.version, 1);
      assert.equal((await tags(space, '/mine')).status, 404);
    });
  });
}
