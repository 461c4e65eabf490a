// Black-box tests of virtual spaces (group, merge, override, custom) and composite spaces (`extends`) on every read and write path (issue 15).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { assertError, type Body, call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { collection, namespaceOf, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { startHubOverTwoDatabases } from '../helpers/two-databases.js';
import { issueToken } from '../helpers/tokens.js';

const features = (space: string) => `/hub/spaces/${space}/features`;
const idsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => String(feature.id));
const spacesOf = (response: TestResponse): Array<string | undefined> => (response.body.features ?? []).map((feature) => feature.properties?.['@ns:com:here:xyz']?.space);
/** A user property of a feature read back. */
const prop = (feature: FeatureJson | Body | undefined, name: string): unknown => (feature?.properties as Record<string, unknown> | undefined)?.[name];
const virtual = (operation: string, upstreams: string[]) => ({ storage: { id: 'virtualspace', params: { virtualspace: { [operation]: upstreams } } } });

async function ok(response: Promise<TestResponse>): Promise<TestResponse> {
  const answer = await response;
  assert.ok(answer.status === 200 || answer.status === 204, `${answer.status} ${answer.text}`);
  return answer;
}

/** Every page of an iterate walk with `limit`, and the ids in the order they came. */
async function walk(hub: HubProcess, space: string, limit: number, between?: (page: number) => Promise<void>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let handle: string | undefined;
  let pages = 0;
  do {
    const response = await ok(call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=${limit}${handle ? `&handle=${handle}` : ''}`));
    ids.push(...idsOf(response));
    handle = response.body.handle as string | undefined;
    pages++;
    await between?.(pages);
  } while (handle !== undefined && pages < 100);
  return { ids, pages };
}

for (const backend of BACKENDS) {
  describe(`virtual spaces (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    /** A with a1, a2, x (in that order) and B with b1, x: x is in both, with different properties. */
    async function upstreams(): Promise<[string, string]> {
      const a = await createSpace(hub, { title: 'A' });
      const b = await createSpace(hub, { title: 'B' });
      await ok(call(hub, 'PUT', features(a), { body: collection(point('a1', { n: 1, kind: 'a' }), point('a2', { n: 2, kind: 'a' }, [10, 10]), point('x', { n: 3, from: 'A', keep: 'A' })) }));
      await ok(call(hub, 'PUT', features(b), { body: collection({ type: 'Feature', id: 'b1', geometry: { type: 'LineString', coordinates: [[8, 50], [9, 51]] }, properties: { n: 4, kind: 'b' } }, point('x', { n: 5, from: 'B' }, [8.6, 50.2])) }));
      return [a, b];
    }

    test('group: the union of the upstreams in their insertion order, each feature naming its upstream', async () => {
      const [a, b] = await upstreams();
      const group = await createSpace(hub, virtual('group', [a, b]));
      const all = await ok(call(hub, 'GET', `/hub/spaces/${group}/iterate`));
      assert.deepEqual(idsOf(all), ['a1', 'a2', 'x', 'b1', 'x']);
      assert.deepEqual(spacesOf(all), [a, a, a, b, b]);
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${group}/count`))).body.count, 5);
      const statistics = await ok(call(hub, 'GET', `/hub/spaces/${group}/statistics`));
      assert.equal((statistics.body.count as { value: number }).value, 5);
      assert.deepEqual((statistics.body.geometryTypes as { value: string[] }).value, ['LineString', 'Point']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/search?p.n>=2&p.n<=4`))), ['a2', 'x', 'b1']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/search?limit=4`))), ['a1', 'a2', 'x', 'b1']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/bbox?west=8&south=49&east=9&north=51`))), ['a1', 'x', 'b1', 'x']);
      // Area reads start every upstream's read at once; the limit still cuts the union in its order.
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/bbox?west=8&south=49&east=9&north=51&limit=3`))), ['a1', 'x', 'b1']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/bbox?west=8&south=49&east=9&north=51&limit=1`))), ['a1']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/bbox?west=8.55&south=50.15&east=9&north=51&limit=1`))), ['b1']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/spatial?lat=50.1&lon=8.5&radius=100`))), ['a1', 'x']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/tile/quadkey/1`))), ['a1', 'a2', 'x', 'b1', 'x']);
      const one = await ok(call(hub, 'GET', `${features(group)}/b1`));
      assert.equal(one.body.id, 'b1');
      assert.equal(namespaceOf(one.body as unknown as FeatureJson).space, b);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `${features(group)}?id=b1,a2,nope`))), ['b1', 'a2']);
      assertError(await call(hub, 'GET', `${features(group)}/nope`), 404, 'featureNotFound');
      const ogc = await ok(call(hub, 'GET', `/ogc/collections/${group}/items?limit=10&bbox=7,49,9,52`));
      assert.deepEqual(idsOf(ogc), ['a1', 'x', 'b1', 'x']);
      // Clustering counts every feature of the union; a spatial search may take its geometry from a virtual space.
      const cells = await ok(call(hub, 'GET', `/hub/spaces/${group}/bbox?west=7&south=49&east=11&north=52&clustering=hexbin`));
      const counted = (cells.body.features ?? []).reduce((sum, cell) => sum + ((prop(cell, 'aggregation') as { qty: number }).qty), 0);
      assert.equal(counted, 4, "a1, both x and b1; a2 lies outside the box");
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${a}/spatial?refSpaceId=${group}&refFeatureId=b1&radius=50000`))), ['a1', 'x']);
    });

    test('group: vector tiles hold the features of every upstream', async () => {
      const [a, b] = await upstreams();
      const group = await createSpace(hub, virtual('group', [a, b]));
      const response = await fetch(`${hub.url}/hub/spaces/${group}/tile/web/0_0_0.mvt`, { headers: { authorization: `Bearer ${hub.token}` } });
      assert.equal(response.status, 200);
      const tile = new VectorTile(new PbfReader(Buffer.from(await response.arrayBuffer())));
      const layer = tile.layers[group];
      assert.ok(layer, `layer ${group} in ${Object.keys(tile.layers).join(',')}`);
      const ids = Array.from({ length: layer.length }, (_, index) => String(layer.feature(index).properties.id ?? layer.feature(index).id));
      assert.equal(ids.length, 5, ids.join(','));
    });

    test('group: iterate pages cross the upstreams with no feature twice or missing while others write', async () => {
      const a = await createSpace(hub, { title: 'A' });
      const b = await createSpace(hub, { title: 'B' });
      await ok(call(hub, 'PUT', features(a), { body: collection(...Array.from({ length: 7 }, (_, i) => point(`a${i}`, { i }))) }));
      await ok(call(hub, 'PUT', features(b), { body: collection(...Array.from({ length: 6 }, (_, i) => point(`b${i}`, { i }))) }));
      const group = await createSpace(hub, virtual('group', [a, b]));
      const { ids, pages } = await walk(hub, group, 3, async (page) => {
        // Updates of features already read and not yet read, and new features, in both upstreams.
        await ok(call(hub, 'PATCH', `${features(a)}/a${page % 7}`, { body: point(`a${page % 7}`, { touched: page }) }));
        await ok(call(hub, 'PATCH', `${features(b)}/b${page % 6}`, { body: point(`b${page % 6}`, { touched: page }) }));
        await ok(call(hub, 'PUT', features(b), { body: collection(point(`new${page}`)) }));
      });
      const original = [...Array.from({ length: 7 }, (_, i) => `a${i}`), ...Array.from({ length: 6 }, (_, i) => `b${i}`)];
      assert.deepEqual(ids.filter((id) => !id.startsWith('new')), original);
      assert.equal(new Set(ids).size, ids.length, `no feature twice: ${ids.join(',')}`);
      assert.ok(pages >= 5);
    });

    test('override: an id in several upstreams comes once, from the last, and names it', async () => {
      const [a, b] = await upstreams();
      const space = await createSpace(hub, virtual('override', [a, b]));
      const all = await ok(call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=2`));
      assert.deepEqual(idsOf(all), ['a1', 'a2']);
      const rest = await ok(call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=10&handle=${String(all.body.handle)}`));
      assert.deepEqual(idsOf(rest), ['b1', 'x']);
      const x = await ok(call(hub, 'GET', `${features(space)}/x`));
      assert.equal(prop(x.body, 'from'), 'B');
      assert.equal(namespaceOf(x.body as unknown as FeatureJson).space, b);
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${space}/count`))).body.count, 4);
      // A's x matches, but B's x (the one shown) does not: x is not found.
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${space}/search?p.from=A`))), []);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${space}/search?p.from=B`))), ['x']);
      const statistics = await ok(call(hub, 'GET', `/hub/spaces/${space}/statistics`));
      assert.equal((statistics.body.count as { value: number }).value, 4);
    });

    test('merge: features sharing an id become one, later upstreams winning, without a space', async () => {
      const [a, b] = await upstreams();
      const space = await createSpace(hub, virtual('merge', [a, b]));
      const all = await ok(call(hub, 'GET', `/hub/spaces/${space}/iterate`));
      assert.deepEqual(idsOf(all), ['a1', 'a2', 'x', 'b1']);
      const x = (all.body.features ?? [])[2];
      assert.equal(prop(x, 'from'), 'B');
      assert.equal(prop(x, 'keep'), 'A');
      assert.equal(prop(x, 'n'), 5);
      assert.deepEqual(x.geometry?.coordinates, [8.6, 50.2, 0]);
      assert.equal(namespaceOf(x).space, undefined);
      assert.equal(spacesOf(all)[0], a);
      const one = await ok(call(hub, 'GET', `${features(space)}/x`));
      assert.equal(prop(one.body, 'keep'), 'A');
      assert.equal(prop(one.body, 'from'), 'B');
      // Found through either version, shown merged and once.
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${space}/search?p.keep=A`))), ['x']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${space}/search?p.n>=3`))), ['x', 'b1']);
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${space}/count`))).body.count, 4);
    });

    test('writes: new features go to the last upstream, existing ones where they are, deletes to every upstream holding the id', async () => {
      const [a, b] = await upstreams();
      const group = await createSpace(hub, virtual('group', [a, b]));
      await ok(call(hub, 'PUT', features(group), { body: collection(point('new', { via: 'group' })) }));
      assert.equal((await call(hub, 'GET', `${features(b)}/new`)).status, 200);
      assert.equal((await call(hub, 'GET', `${features(a)}/new`)).status, 404);
      const patched = await ok(call(hub, 'PATCH', `${features(group)}/a1`, { body: point('a1', { patched: true }) }));
      assert.equal(namespaceOf(patched.body as unknown as FeatureJson).space, a);
      assert.equal(prop((await ok(call(hub, 'GET', `${features(a)}/a1`))).body, 'patched'), true);
      await ok(call(hub, 'DELETE', `${features(group)}/x`));
      assert.equal((await call(hub, 'GET', `${features(a)}/x`)).status, 404);
      assert.equal((await call(hub, 'GET', `${features(b)}/x`)).status, 404);
      await ok(call(hub, 'DELETE', `${features(group)}?tags=*`));
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${group}/count`))).body.count, 0);
      await ok(call(hub, 'PUT', features(a), { body: collection(point('keep')) }));
      await ok(call(hub, 'DELETE', `/hub/spaces/${group}`));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${a}/iterate`))), ['keep']);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${b}`)).status, 200);
    });

    test('a failed batch through a virtual space writes nothing in any upstream', async () => {
      const [a, b] = await upstreams();
      const space = await createSpace(hub, virtual('override', [a, b]));
      const before = [await ok(call(hub, 'GET', `/hub/spaces/${a}/iterate`)), await ok(call(hub, 'GET', `/hub/spaces/${b}/iterate`))].map((response) => response.text);
      // a1 would be updated in A; `missing` exists nowhere, which ne=error refuses: the whole batch fails.
      const response = await call(hub, 'POST', `${features(space)}?ne=error&transactional=true`, { body: collection(point('a1', { change: 1 }), point('missing', { change: 1 })) });
      assert.equal(response.status, 409, response.text);
      const after = [await ok(call(hub, 'GET', `/hub/spaces/${a}/iterate`)), await ok(call(hub, 'GET', `/hub/spaces/${b}/iterate`))].map((answer) => answer.text);
      assert.deepEqual(after, before);
    });

    test('a write through a virtual space is logged by the upstream it changes; a virtual space has no log of its own', async () => {
      const a = await createSpace(hub, { title: 'A' });
      const b = await createSpace(hub, { title: 'logged B', enableUUID: true, listeners: { 'activity-log': [{ params: {} }] } });
      const group = await createSpace(hub, virtual('group', [a, b]));
      await ok(call(hub, 'PUT', features(group), { body: collection(point('new')) }));
      await ok(call(hub, 'DELETE', `${features(group)}/new`));
      const log = await ok(call(hub, 'GET', `/hub/spaces/${b}-activity-log/iterate`));
      const operations = (log.body.features ?? []).map((entry) => (entry.properties as Record<string, { operation: string }>)['@ns:com:here:xyz:log'].operation);
      assert.deepEqual(operations, ['insert', 'delete']);
      const refused = await call(hub, 'POST', '/hub/spaces', { body: { title: 'x', enableUUID: true, ...virtual('group', [a]), listeners: { 'activity-log': [{ params: {} }] } } });
      assertError(refused, 400, 'spaceValidation', 'activity log');
    });

    test('the processors of the upstream written to check and tag writes through a virtual space', async () => {
      const a = await createSpace(hub, { title: 'A' });
      const schema = { type: 'object', properties: { properties: { type: 'object', required: ['name'] } } };
      const b = await createSpace(hub, { title: 'B', processors: [{ id: 'schema-validator', params: { schema } }, { id: 'rule-tagger', params: { taggingRules: { named: '$.features[?(@.properties.name)]' } } }] });
      const group = await createSpace(hub, virtual('group', [a, b]));
      assertError(await call(hub, 'PUT', features(group), { body: collection(point('ok', { name: 'n' }), point('bad')) }), 400, 'schemaValidationFailed', 'id bad');
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${b}/count`))).body.count, 0);
      await ok(call(hub, 'PUT', features(group), { body: collection(point('ok', { name: 'n' })) }));
      assert.deepEqual(namespaceOf((await ok(call(hub, 'GET', `${features(b)}/ok`))).body as unknown as FeatureJson).tags, ['named']);
    });

    test('custom is stored and its reads answer 501', async () => {
      const [a, b] = await upstreams();
      const space = await createSpace(hub, virtual('custom', [a, b]));
      const stored = await ok(call(hub, 'GET', `/hub/spaces/${space}`));
      assert.deepEqual(stored.body.storage, { id: 'virtualspace', params: { virtualspace: { custom: [a, b] } } });
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/iterate`), 501, 'customVirtualSpace');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/statistics`), 501, 'customVirtualSpace');
      assertError(await call(hub, 'PUT', features(space), { body: collection(point('n')) }), 501, 'customVirtualSpace');
      // The OGC collections list leaves out what cannot be read instead of failing.
      const group = await createSpace(hub, virtual('group', [a, b]));
      const listed = await ok(call(hub, 'GET', '/ogc/collections?f=json'));
      const ids = (listed.body.collections as Array<{ id: string }>).map((entry) => entry.id);
      assert.ok(ids.includes(group) && !ids.includes(space), ids.join(','));
    });

    test('bad definitions are refused with 400 naming the problem', async () => {
      const [a] = await upstreams();
      const create = (extra: Record<string, unknown>) => call(hub, 'POST', '/hub/spaces', { body: { title: 'bad', ...extra } });
      assertError(await create(virtual('union', [a])), 400, 'spaceValidation', 'storage.params.virtualspace', 'group');
      assertError(await create(virtual('group', [])), 400, 'spaceValidation', 'storage.params.virtualspace.group');
      assertError(await create(virtual('group', [a, a])), 400, 'spaceValidation', 'different');
      assertError(await create({ storage: { id: 'virtualspace', params: { virtualspace: { group: [a], merge: [a] } } } }), 400, 'spaceValidation', 'exactly one');
      assertError(await create(virtual('group', [a, 'no-such-space'])), 400, 'spaceValidation', 'no-such-space', 'does not exist');
      const group = await createSpace(hub, virtual('group', [a]));
      assertError(await create(virtual('group', [group])), 400, 'spaceValidation', group, 'plain spaces only');
      assertError(await create({ ...virtual('group', [a]), extends: { spaceId: a } }), 400, 'spaceValidation', 'cannot extend');
    });

    test('reads need readFeatures on every upstream; a deleted upstream is a clear 409', async () => {
      const [a, b] = await upstreams();
      const group = await createSpace(hub, virtual('group', [a, b]));
      const other = await issueToken(hub, { aid: `reader-${backend}`, urm: { 'xyz-hub': { readFeatures: [{ space: group }, { space: a }] } } });
      const asOther = { headers: { authorization: `Bearer ${other.token}` } };
      assertError(await call(hub, 'GET', `/hub/spaces/${group}/iterate`, asOther), 403, 'insufficientRights');
      const both = await issueToken(hub, { aid: `reader2-${backend}`, urm: { 'xyz-hub': { readFeatures: [{ space: group }, { space: a }, { space: b }] } } });
      assert.equal((await call(hub, 'GET', `/hub/spaces/${group}/iterate`, { headers: { authorization: `Bearer ${both.token}` } })).status, 200);
      // Writing through it needs the write rights on the upstream written to.
      assertError(await call(hub, 'PUT', features(group), { body: collection(point('w')), headers: { authorization: `Bearer ${both.token}` } }), 403, 'insufficientRights');
      await ok(call(hub, 'DELETE', `/hub/spaces/${b}`));
      assertError(await call(hub, 'GET', `/hub/spaces/${group}/iterate`), 409, 'layerUnavailable', b, 'does not exist');
      assertError(await call(hub, 'GET', `${features(group)}/a1`), 409, 'layerUnavailable');
    });

    test('ETags change when an upstream changes', async () => {
      const [a, b] = await upstreams();
      const group = await createSpace(hub, virtual('group', [a, b]));
      const first = await ok(call(hub, 'GET', `/hub/spaces/${group}/iterate`));
      const etag = first.headers.get('etag') ?? '';
      assert.equal((await call(hub, 'GET', `/hub/spaces/${group}/iterate`, { headers: { 'if-none-match': etag } })).status, 304);
      await ok(call(hub, 'PUT', features(b), { body: collection(point('later')) }));
      assert.equal((await call(hub, 'GET', `/hub/spaces/${group}/iterate`, { headers: { 'if-none-match': etag } })).status, 200);
      // Another list of upstreams is read at once (the hub remembers the last layers only as a lookup hint).
      const c = await createSpace(hub, { title: 'C' });
      await ok(call(hub, 'PUT', features(c), { body: collection(point('c1')) }));
      await ok(call(hub, 'PATCH', `/hub/spaces/${group}`, { body: virtual('group', [c, a]) }));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/iterate`))), ['c1', 'a1', 'a2', 'x']);
    });
  });

  describe(`composite spaces (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    async function base(): Promise<string> {
      const space = await createSpace(hub, { title: 'base' });
      await ok(call(hub, 'PUT', features(space), { body: collection(point('b1', { n: 1 }), point('b2', { n: 2 }, [9, 51]), point('b3', { n: 3 })) }));
      return space;
    }

    test('reads show the base features plus its own; writes, deletes and re-adds change only its own layer', async () => {
      const b = await base();
      const c = await createSpace(hub, { title: 'composite', extends: { spaceId: b } });
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/iterate`))), ['b1', 'b2', 'b3']);
      await ok(call(hub, 'PUT', features(c), { body: collection(point('c1', { n: 10 })) }));
      const patched = await ok(call(hub, 'PATCH', `${features(c)}/b1`, { body: point('b1', { patched: true }) }));
      assert.equal(prop(patched.body, 'n'), 1, 'the patch merged into the base feature');
      assert.equal(namespaceOf(patched.body as unknown as FeatureJson).space, c);
      await ok(call(hub, 'DELETE', `${features(c)}/b2`));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/iterate`))), ['b3', 'c1', 'b1']);
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${c}/count`))).body.count, 3);
      assertError(await call(hub, 'GET', `${features(c)}/b2`), 404, 'featureNotFound');
      assertError(await call(hub, 'DELETE', `${features(c)}/b2`), 404, 'featureNotFound');
      // The base is unchanged.
      const inBase = await ok(call(hub, 'GET', `/hub/spaces/${b}/iterate`));
      assert.deepEqual(idsOf(inBase), ['b1', 'b2', 'b3']);
      assert.equal(prop(inBase.body.features?.[0], 'patched'), undefined);
      // Re-adding a deleted feature shows the new one.
      await ok(call(hub, 'PUT', features(c), { body: collection(point('b2', { again: true })) }));
      const again = await ok(call(hub, 'GET', `${features(c)}/b2`));
      assert.equal(prop(again.body, 'again'), true);
      assert.equal(prop(again.body, 'n'), undefined);
    });

    test('the base changing underneath shows through where the composite has no own version', async () => {
      const b = await base();
      const c = await createSpace(hub, { title: 'composite', extends: { spaceId: b } });
      await ok(call(hub, 'PATCH', `${features(c)}/b1`, { body: point('b1', { mine: true }) }));
      await ok(call(hub, 'DELETE', `${features(c)}/b3`));
      await ok(call(hub, 'PUT', features(b), { body: collection(point('b4', { n: 4 }), point('b2', { n: 22 }), point('b3', { n: 33 })) }));
      await ok(call(hub, 'DELETE', `${features(b)}/b1`));
      const shown = await ok(call(hub, 'GET', `/hub/spaces/${c}/iterate`));
      assert.deepEqual(idsOf(shown), ['b2', 'b4', 'b1']);
      assert.equal(prop(shown.body.features?.[0], 'n'), 22);
      assert.equal(prop(shown.body.features?.[2], 'mine'), true);
      // Deleting the own version of a feature the base no longer holds removes it for good.
      await ok(call(hub, 'DELETE', `${features(c)}/b1`));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/iterate`))), ['b2', 'b4']);
    });

    test('search, bbox, statistics, delete by tag and conditional writes see the composite view', async () => {
      const b = await base();
      await ok(call(hub, 'PUT', `${features(b)}?addTags=red`, { body: collection(point('r1'), point('r2')) }));
      const c = await createSpace(hub, { title: 'composite', extends: { spaceId: b } });
      await ok(call(hub, 'PATCH', `${features(c)}/b3`, { body: point('b3', { n: 30 }) }));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/search?p.n>=2`))), ['b2', 'b3']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/search?p.n=3`))), []);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/bbox?west=8.9&south=50.9&east=9.1&north=51.1`))), ['b2']);
      const statistics = await ok(call(hub, 'GET', `/hub/spaces/${c}/statistics`));
      assert.equal((statistics.body.count as { value: number }).value, 5);
      await ok(call(hub, 'DELETE', `${features(c)}?tags=red`));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/iterate`))), ['b1', 'b2', 'b3']);
      assert.equal((await ok(call(hub, 'GET', `/hub/spaces/${b}/count`))).body.count, 5);
      // POST with ne=error: b1 exists in the composite view (from the base), so an update works and a missing id fails.
      assertError(await call(hub, 'POST', `${features(c)}?ne=error&transactional=true`, { body: collection(point('b1', { u: 1 }), point('nope')) }), 409, 'featureMissing');
      assert.equal(prop((await ok(call(hub, 'GET', `${features(c)}/b1`))).body, 'u'), undefined);
    });

    test('OGC items pages and vector tiles show the composite view', async () => {
      const b = await base();
      const c = await createSpace(hub, { title: 'composite', extends: { spaceId: b } });
      await ok(call(hub, 'DELETE', `${features(c)}/b2`));
      await ok(call(hub, 'PUT', features(c), { body: collection(point('c1'), point('c2'), point('b3', { n: 33 })) }));
      const ids: string[] = [];
      let path: string | undefined = `/ogc/collections/${c}/items?limit=2`;
      for (let pages = 0; path !== undefined && pages < 10; pages++) {
        const page = await ok(call(hub, 'GET', path));
        ids.push(...idsOf(page));
        const next = (page.body.links as Array<{ rel: string; href: string }>).find((link) => link.rel === 'next');
        path = next ? new URL(next.href).pathname + new URL(next.href).search : undefined;
      }
      assert.deepEqual(ids, ['b1', 'c1', 'c2', 'b3']);
      const response = await fetch(`${hub.url}/hub/spaces/${c}/tile/web/0_0_0.mvt`, { headers: { authorization: `Bearer ${hub.token}` } });
      assert.equal(response.status, 200);
      const layer = new VectorTile(new PbfReader(Buffer.from(await response.arrayBuffer()))).layers[c];
      assert.equal(layer?.length, 4);
    });

    test('a composite with an activity log logs what its writes mean: a hidden base feature is a delete', async () => {
      const b = await base();
      const c = await createSpace(hub, { title: 'logged composite', enableUUID: true, extends: { spaceId: b }, listeners: { 'activity-log': [{ params: {} }] } });
      await ok(call(hub, 'PATCH', `${features(c)}/b1`, { body: point('b1', { mine: true }) }));
      await ok(call(hub, 'DELETE', `${features(c)}/b2`));
      const log = await ok(call(hub, 'GET', `/hub/spaces/${c}-activity-log/iterate`));
      const entries = (log.body.features ?? []).map((entry) => (entry.properties as Record<string, { id: string; operation: string }>)['@ns:com:here:xyz:log']);
      assert.deepEqual(entries.map((entry) => [entry.id, entry.operation]), [['b1', 'update'], ['b2', 'delete']]);
    });

    test('two levels: a composite of a composite; a third level is refused', async () => {
      const b = await base();
      const c = await createSpace(hub, { title: 'level 1', extends: { spaceId: b } });
      await ok(call(hub, 'DELETE', `${features(c)}/b1`));
      await ok(call(hub, 'PUT', features(c), { body: collection(point('c1')) }));
      const d = await createSpace(hub, { title: 'level 2', extends: { spaceId: c } });
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${d}/iterate`))), ['b2', 'b3', 'c1']);
      await ok(call(hub, 'DELETE', `${features(d)}/b2`));
      await ok(call(hub, 'PUT', features(d), { body: collection(point('b1', { back: true })) }));
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${d}/iterate`))), ['b3', 'c1', 'b1']);
      assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${c}/iterate`))), ['b2', 'b3', 'c1']);
      const refused = await call(hub, 'POST', '/hub/spaces', { body: { title: 'level 3', extends: { spaceId: d } } });
      assertError(refused, 400, 'spaceValidation', 'more than 2 levels');
      assertError(await call(hub, 'POST', '/hub/spaces', { body: { title: 'x', extends: { spaceId: 'no-such-space' } } }), 400, 'spaceValidation', 'does not exist');
      // `extends` is set when the space is created: the composite's tombstones belong to its base.
      assertError(await call(hub, 'PATCH', `/hub/spaces/${b}`, { body: { extends: { spaceId: c } } }), 400, 'creationOnlyProperty', 'extends');
      assertError(await call(hub, 'PATCH', `/hub/spaces/${c}`, { body: { extends: null } }), 400, 'creationOnlyProperty', 'extends');
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${c}`, { body: { extends: { spaceId: b }, title: 'same base' } })).status, 200);
      // A self-reference through an existing chain is refused when created, too.
      assertError(await call(hub, 'POST', '/hub/spaces', { body: { id: `self-${backend}`, title: 'x', extends: { spaceId: `self-${backend}` } } }), 400, 'spaceValidation');
    });
  });
}

describe('a virtual space over two PostgreSQL databases', { skip: BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run' }, () => {
  let hub: HubProcess;
  let stop: (() => Promise<void>) | undefined;
  before(async () => { ({ hub, stop } = await startHubOverTwoDatabases()); });
  after(async () => { await stop?.(); });

  test('reads combine both databases; a write within one works, one spanning both is refused and writes nothing', async () => {
    // New spaces go to the database with the fewest spaces: A to the first, B to the second.
    const a = await createSpace(hub, { title: 'A' });
    const b = await createSpace(hub, { title: 'B' });
    await ok(call(hub, 'PUT', features(a), { body: collection(point('a1'), point('x', { from: 'A' })) }));
    await ok(call(hub, 'PUT', features(b), { body: collection(point('b1'), point('x', { from: 'B' })) }));
    const group = await createSpace(hub, virtual('group', [a, b]));
    assert.deepEqual(idsOf(await ok(call(hub, 'GET', `/hub/spaces/${group}/iterate`))), ['a1', 'x', 'b1', 'x']);
    const override = await createSpace(hub, virtual('override', [a, b]));
    assert.equal(prop((await ok(call(hub, 'GET', `${features(override)}/x`))).body, 'from'), 'B');
    await ok(call(hub, 'PUT', features(group), { body: collection(point('new')) }));
    assert.equal((await call(hub, 'GET', `${features(b)}/new`)).status, 200);
    assertError(await call(hub, 'DELETE', `${features(group)}/x`), 409, 'writeAcrossDatabases');
    assert.equal((await call(hub, 'GET', `${features(a)}/x`)).status, 200);
    assert.equal((await call(hub, 'GET', `${features(b)}/x`)).status, 200);
  });
});
