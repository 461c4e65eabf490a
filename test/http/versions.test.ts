// Black-box tests of versions (ADR 002, issue 23 part 2, first slice): numbering, namespace version/author, reads at a version, version=*, refusals.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, properties: Record<string, unknown> = {}, tags: string[] = []) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { ...properties, [NS]: { tags } } });
const ids = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);
const nsOf = (feature: FeatureJson): Record<string, unknown> => feature.properties[NS] as unknown as Record<string, unknown>;

for (const backend of BACKENDS) {
  describe(`versions (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, features: object[]) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
    /** HEAD as the 400 for a version past it names it. */
    async function head(space: string): Promise<number> {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/search?version=999999999`);
      assert.equal(response.status, 400, response.text);
      const match = /HEAD is (-?\d+)/.exec(String(response.body.errorMessage));
      assert.ok(match, response.text);
      return Number(match[1]);
    }

    test('numbering: the first write is 0, no-op writes and failed batches take none', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/search?version=0`), 400, 'versionNotReadable');
      assert.equal((await put(space, [point('a', { n: 1 })])).status, 200);
      assert.equal(await head(space), 0);
      // A PATCH that changes nothing takes no version.
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}/features/a`, { body: { properties: { n: 1 } } })).status, 200);
      assert.equal(await head(space), 0);
      // A transactional batch that fails (a feature that exists, e=error) takes none.
      const failed = await call(hub, 'POST', `/hub/spaces/${space}/features?e=error`, { body: { type: 'FeatureCollection', features: [point('b'), point('a')] } });
      assert.equal(failed.status, 409, failed.text);
      assert.equal(await head(space), 0);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=zzz`)).status < 300, true);
      assert.equal(await head(space), 0);
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}/features/a`, { body: { properties: { n: 2 } } })).status, 200);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/a`)).status, 204);
      assert.equal((await put(space, [point('t', {}, ['x'])])).status, 200);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features?tags=x`)).status < 300, true);
      assert.equal(await head(space), 4);
    });

    test('a space keeping one version numbers its writes but carries no version in its features', async () => {
      const space = await createSpace(hub);
      await put(space, [point('a')]);
      await put(space, [point('a', { n: 2 })]);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features?tags=*`)).status < 300, true);
      assert.equal(await head(space), 2);
      await put(space, [point('b')]);
      const read = await call(hub, 'GET', `/hub/spaces/${space}/features/b?version=3`);
      assert.equal(read.status, 200, read.text);
      assert.equal(nsOf(read.body as unknown as FeatureJson).version, undefined);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/b?version=2`), 400, 'versionTooOld', 'oldest version that can be read is 3');
    });

    test('namespace version and author; reads at a version after updates and deletes; version=*', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await put(space, [point('a', { n: 0 }, ['red']), point('b', { n: 0 })]);
      await call(hub, 'PATCH', `/hub/spaces/${space}/features/a`, { body: { properties: { n: 1 }, } });
      await call(hub, 'DELETE', `/hub/spaces/${space}/features/b`);
      await put(space, [point('c', { n: 2 }, ['red'])]);
      const a = (await call(hub, 'GET', `/hub/spaces/${space}/features/a`)).body as unknown as FeatureJson;
      assert.equal(nsOf(a).version, 1);
      assert.equal(typeof nsOf(a).author, 'string');
      assert.ok((nsOf(a).author as string).length > 0);

      const at0 = await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=0`);
      assert.equal(at0.status, 200, at0.text);
      assert.equal((at0.body as unknown as FeatureJson).properties.n, 0);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/b?versionRef=0`)).status, 200);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/b?version=2`)).status, 404);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/b?versionRef=HEAD`)).status, 404);
      assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/features?id=c,b,a&version=1`)), ['b', 'a']);
      assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/search?version=2`)), ['a']);
      assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/search?version=0&tags=red`)), ['a']);
      assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/search?version=3&tags=red`)), ['a', 'c']);
      assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/search?version=1&p.n=1`)), ['a']);
      assert.deepEqual(ids(await call(hub, 'GET', `/hub/spaces/${space}/search?version=0&p.n=1`)), []);

      // Iterate keeps the version it started at: the handle carries it.
      const first = await call(hub, 'GET', `/hub/spaces/${space}/iterate?version=0&limit=1`);
      assert.deepEqual(ids(first), ['a']);
      await put(space, [point('d')]);
      const second = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1&handle=${first.body.handle as string}`);
      assert.deepEqual(ids(second), ['b']);
      const third = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1&handle=${second.body.handle as string}`);
      assert.deepEqual(ids(third), []);

      const all = await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=*`);
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.type, 'FeatureCollection');
      assert.deepEqual((all.body.features ?? []).map((feature) => [feature.properties.n, nsOf(feature).version]), [[0, 0], [1, 1]]);
      const both = await call(hub, 'GET', `/hub/spaces/${space}/features?id=b,a&version=*`);
      assert.deepEqual(ids(both), ['b', 'a', 'a']);
    });

    test('versions out of range answer 400 on every read path, naming the oldest kept', async () => {
      const space = await createSpace(hub, { versionsToKeep: 2 });
      for (let n = 0; n < 4; n++) await put(space, [point('a', { n })]);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=1`), 400, 'versionTooOld', 'oldest version that can be read is 2');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/search?version=4`), 400, 'versionNotYet', 'HEAD is 3', 'oldest version that can be read is 2');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features?id=a&version=1x`), 400, 'invalidParameter');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features?id=a&version=x`), 400, 'unknownVersionTag');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/search?version=*`), 400, 'invalidParameter');
      for (const path of ['bbox?west=0&south=0&east=3&north=3', 'tile/quadkey/0', 'tile/web/0_0_0.mvt', 'spatial?lat=2&lon=1&radius=10', 'count', 'statistics',
        'bbox?west=0&south=0&east=3&north=3&clustering=hexbin']) {
        const at = (version: string) => call(hub, 'GET', `/hub/spaces/${space}/${path}${path.includes('?') ? '&' : '?'}version=${version}`);
        assertError(await at('1'), 400, 'versionTooOld', 'oldest version that can be read is 2');
        assert.equal((await at('2')).status, 200, path);
        assert.equal((await at('HEAD')).status, 200, path);
      }
      assertError(await call(hub, 'POST', `/hub/spaces/${space}/spatial?version=1`, { body: { type: 'Point', coordinates: [1, 2] } }), 400, 'versionTooOld');
      // OGC errors carry the message as `description`.
      const ogc = await call(hub, 'GET', `/ogc/collections/${space}/items?version=1`);
      assertError(ogc, 400, 'versionTooOld');
      assert.ok(String(ogc.body.description).includes('oldest version that can be read is 2'), ogc.text);
      assertError(await call(hub, 'GET', `/ogc/collections/${space}/items/a?version=1`), 400, 'versionTooOld');
    });

    test('a caller who may not read the space learns nothing of it at any version', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await put(space, [point('secret', { n: 0 })]);
      await put(space, [point('secret', { n: 1 })]);
      const { token } = await issueToken(hub, { aid: 'versions-outsider', urm: ownerRights('versions-outsider') });
      const headers = { authorization: `Bearer ${token}` };
      for (const path of ['features/secret?version=0', 'features/secret?version=*', 'features?id=secret&version=*', 'features?id=secret&version=0',
        'search?version=0', 'iterate?version=0', 'features/secret?version=99', 'iterate?handle=10000000000000000']) {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/${path}`, { headers });
        assertError(response, 403, 'insufficientRights');
        assert.ok(!response.text.includes('"n"'), `${path}: ${response.text}`);
      }
    });

    test('a write through a composite space versions its own layer', async () => {
      const base = await createSpace(hub, { versionsToKeep: 5 });
      await put(base, [point('a', { n: 0 })]);
      const composite = await createSpace(hub, { versionsToKeep: 5, extends: { spaceId: base } });
      const first = await put(composite, [point('a', { n: 1 })]);
      assert.equal(nsOf((first.body.features ?? [])[0]).version, 0);
      const second = await put(composite, [point('a', { n: 2 }), point('b')]);
      assert.deepEqual((second.body.features ?? []).map((feature) => nsOf(feature).version), [1, 1]);
      assert.equal(await head(base), 0);
      const at0 = await call(hub, 'GET', `/hub/spaces/${composite}/features/a?version=0`);
      assert.equal((at0.body as unknown as FeatureJson).properties.n, 1, at0.text);
      assertError(await call(hub, 'GET', `/hub/spaces/${composite}/features/a?version=*`), 400, 'statesOfLayers');
    });

    test('model: the space at a random kept version after each random write (iterate, bbox, count)', async () => {
      const random = seededRandom(23);
      const keep = 6;
      const space = await createSpace(hub, { versionsToKeep: keep });
      interface State { v: number; x: number; y: number }
      const model: Array<Map<string, State>> = [];
      let current = new Map<string, State>();
      const sorted = (entries: Array<[string, number]>) => entries.sort(([x], [y]) => x.localeCompare(y));
      const rowsOf = (response: TestResponse) => sorted((response.body.features ?? []).map((feature) => [feature.id, feature.properties.v as number]));
      for (let step = 0; step < 30; step++) {
        const id = `f${Math.floor(random() * 5)}`;
        const next = new Map(current);
        const action = random();
        if (action < 0.6) {
          const state = { v: Math.floor(random() * 100), x: Math.floor(random() * 10), y: Math.floor(random() * 10) };
          const feature = { type: 'Feature', id, geometry: { type: 'Point', coordinates: [state.x, state.y] }, properties: { v: state.v } };
          assert.equal((await put(space, [feature])).status, 200);
          next.set(id, state);
        } else if (current.has(id)) {
          assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/${id}`)).status, 204);
          next.delete(id);
        } else continue;
        current = next;
        model.push(current);
        const headVersion = model.length - 1;
        const version = Math.max(0, headVersion - Math.floor(random() * keep));
        const context = `step ${step}, version ${version} of HEAD ${headVersion}`;
        const expected = sorted([...model[version].entries()].map(([key, state]) => [key, state.v]));
        const read = await call(hub, 'GET', `/hub/spaces/${space}/iterate?version=${version}`);
        assert.equal(read.status, 200, read.text);
        assert.deepEqual(rowsOf(read), expected, context);

        const [west, south] = [Math.floor(random() * 10), Math.floor(random() * 10)];
        const [east, north] = [west + Math.floor(random() * 6), south + Math.floor(random() * 6)];
        const inBox = sorted([...model[version].entries()].filter(([, state]) => state.x >= west && state.x <= east && state.y >= south && state.y <= north)
          .map(([key, state]) => [key, state.v]));
        const box = await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=${west}&south=${south}&east=${east}&north=${north}&version=${version}`);
        assert.equal(box.status, 200, box.text);
        assert.deepEqual(rowsOf(box), inBox, `${context}, box ${west},${south},${east},${north}`);
        const count = await call(hub, 'GET', `/hub/spaces/${space}/count?version=${version}`);
        assert.equal(count.body.count, model[version].size, `${context}: ${count.text}`);
      }
    });

    if (backend === 'postgres') {
      test('concurrent writers get distinct consecutive versions', async () => {
        const space = await createSpace(hub, { versionsToKeep: 100 });
        const writes = await Promise.all(Array.from({ length: 12 }, (_, n) => put(space, [point(`p${n}`, { n })])));
        for (const write of writes) assert.equal(write.status, 200, write.text);
        const versions = writes.map((write) => nsOf((write.body.features ?? [])[0]).version as number).sort((x, y) => x - y);
        assert.deepEqual(versions, Array.from({ length: 12 }, (_, n) => n));
        assert.equal(await head(space), 11);
        const plain = await createSpace(hub);
        await Promise.all(Array.from({ length: 12 }, (_, n) => put(plain, [point(`p${n}`)])));
        assert.equal(await head(plain), 11);
      });
    }
  });
}
