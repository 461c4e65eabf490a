// Black-box tests of three-way merges and conflicts keyed on the version a feature was read at (ADR 002 "Merges", issue 23), and of versions under concurrent writers on two nodes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';
import { askOnNewConnection, type WorkerAnswer } from '../helpers/worker-processes.js';

const NS = '@ns:com:here:xyz';
type Geometry = { type: string; coordinates: unknown } | null;
const feature = (id: string, properties: Record<string, unknown>, namespace: Record<string, unknown> = {}, geometry: Geometry = { type: 'Point', coordinates: [1, 2] }) =>
  ({ type: 'Feature', id, geometry, properties: { ...properties, [NS]: namespace } });
const collection = (...features: object[]) => ({ type: 'FeatureCollection', features });
const nsOf = (item: FeatureJson): Record<string, unknown> => item.properties[NS] as unknown as Record<string, unknown>;
/** The user properties of a feature, without the namespace. */
const propertiesOf = (item: FeatureJson): Record<string, unknown> => {
  const { [NS]: _namespace, ...properties } = item.properties;
  return properties;
};

for (const backend of BACKENDS) {
  describe(`version merges (${backend})`, () => {
    let hub: HubProcess;
    /** PostgreSQL: a second node on the hub's database; SQLite: none (the hub's two workers are the two nodes). */
    let second: HubProcess | undefined;
    before(async () => {
      hub = await startHub({ backend, env: backend === 'sqlite' ? { HUB_WORKERS: '2' } : {} });
      if (backend === 'postgres') second = await startHub({ backend, storage: hub.storage });
    });
    after(async () => {
      await second?.stop();
      await hub?.stop();
    });

    const post = (space: string, body: object, query = '') => call(hub, 'POST', `/hub/spaces/${space}/features${query}`, { body });
    const get = async (space: string, id: string, query = ''): Promise<FeatureJson> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/features/${id}${query}`);
      assert.equal(response.status, 200, response.text);
      return response.body as unknown as FeatureJson;
    };
    /** HEAD as the 400 for a version past it names it. */
    async function head(space: string): Promise<number> {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/search?version=999999999`);
      const match = /HEAD is (-?\d+)/.exec(String(response.body.errorMessage));
      assert.ok(match, response.text);
      return Number(match[1]);
    }
    /** A space keeping `keep` versions with feature `a` written at version 0. */
    async function spaceWithA(properties: Record<string, unknown>, keep = 10): Promise<string> {
      const space = await createSpace(hub, { versionsToKeep: keep });
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(feature('a', properties, { tags: ['t'] })) })).status, 200);
      return space;
    }
    /** A write on the `node`th node: PostgreSQL alternates two hub processes, SQLite asks on a new connection, which one of two workers takes. */
    async function onNode(node: number, method: string, path: string, body: object): Promise<WorkerAnswer> {
      if (backend === 'postgres') {
        const target = node % 2 === 0 ? hub : second as HubProcess;
        const response = await call(target, method, path, { body });
        return { status: response.status, body: response.text, worker: node % 2 } as WorkerAnswer;
      }
      return askOnNewConnection(hub, method, path, { token: hub.token, body: JSON.stringify(body) });
    }

    test('patches of different properties from the same version both apply, nested objects member by member', async () => {
      const space = await spaceWithA({ name: 'x', n: 1, nested: { a: 1, b: 1 } });
      const first = await post(space, feature('a', { name: 'A', nested: { a: 2 } }, { version: 0 }));
      assert.equal(first.status, 200, first.text);
      const second = await post(space, feature('a', { n: 2, nested: { b: 2 } }, { version: 0 }));
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(second.body.updated, ['a']);
      const merged = await get(space, 'a');
      assert.deepEqual(propertiesOf(merged), { name: 'A', n: 2, nested: { a: 2, b: 2 } });
      assert.equal(nsOf(merged).version, 2);
      assert.deepEqual(nsOf(merged).tags, ['t']);
      // The PATCH route merges alike.
      const patched = await call(hub, 'PATCH', `/hub/spaces/${space}/features/a`, { body: { properties: { extra: true, [NS]: { version: 1 } } } });
      assert.equal(patched.status, 200, patched.text);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { name: 'A', n: 2, nested: { a: 2, b: 2 }, extra: true });
    });

    test('e=merge of a full feature read at an older version keeps the changes made since', async () => {
      const space = await spaceWithA({ name: 'x', n: 1, gone: 1 });
      assert.equal((await post(space, feature('a', { name: 'HEAD' }, { version: 0 }))).status, 200);
      // The client's full state read at 0: it changed n and removed `gone`.
      const merge = await post(space, feature('a', { name: 'x', n: 5 }, { version: 0, tags: ['t'] }), '?e=merge');
      assert.equal(merge.status, 200, merge.text);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { name: 'HEAD', n: 5 });
      // The same full write with e=replace would undo the name it never saw.
      assertError(await post(space, feature('a', { name: 'x', n: 6 }, { version: 0 }), '?e=replace'), 409, 'versionConflict', 'with id a', 'version of the head state: 2');
      assertError(await call(hub, 'PUT', `/hub/spaces/${space}/features/a`, { body: feature('a', { name: 'x' }, { version: 1 }) }), 409, 'versionConflict');
      assertError(await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(feature('a', { name: 'x' }, { version: 0 })) }), 409, 'versionConflict');
      assertError(await post(space, feature('a', {}, { version: 0 }), '?e=delete'), 409, 'versionConflict', 'cannot be deleted');
      assert.equal(await head(space), 2);
      // Read at HEAD, a replace applies.
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features/a`, { body: feature('a', { name: 'r' }, { version: 2 }) })).status, 200);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { name: 'r' });
    });

    test('the same property changed on both sides is a 409 naming the feature and members, and changes nothing', async () => {
      const space = await spaceWithA({ name: 'x', n: 1, nested: { a: 1 } });
      assert.equal((await post(space, feature('a', { name: 'A', nested: { a: 2 } }, { version: 0 }))).status, 200);
      const before = await get(space, 'a');
      const refused = await post(space, feature('a', { name: 'B', n: 3, nested: { a: 3 } }, { version: 0 }));
      assertError(refused, 409, 'mergeConflict', 'with id a', 'read at version 0', 'version 1', 'properties.name', 'properties.nested.a');
      assert.ok(!refused.body.errorMessage?.includes('properties.n,'), refused.text);
      assert.deepEqual(await get(space, 'a'), before);
      assert.equal(await head(space), 1);
      // Both sides making the same change is no conflict.
      assert.equal((await post(space, feature('a', { name: 'A', n: 4 }, { version: 0 }))).status, 200);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { name: 'A', n: 4, nested: { a: 2 } });
      // cr=retain keeps HEAD's value of each conflicting member, cr=replace takes the written one.
      const retained = await post(space, feature('a', { name: 'C', n: 5 }, { version: 0, tags: ['t'] }), '?e=merge&cr=retain');
      assert.equal(retained.status, 200, retained.text);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { name: 'A', n: 4, nested: { a: 2 } });
      assert.equal((await post(space, feature('a', { name: 'D', n: 5 }, { version: 0, tags: ['t'] }), '?e=merge&cr=replace')).status, 200);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { name: 'D', n: 5 });
    });

    test('the geometry merges when one side changed it, and conflicts when both did', async () => {
      const space = await spaceWithA({ n: 1 });
      assert.equal((await post(space, feature('a', {}, { version: 0 }, { type: 'Point', coordinates: [3, 4] }))).status, 200);
      const merged = await post(space, { type: 'Feature', id: 'a', properties: { n: 2, [NS]: { version: 0 } } });
      assert.equal(merged.status, 200, merged.text);
      const after = await get(space, 'a');
      assert.deepEqual(after.geometry?.coordinates, [3, 4, 0]);
      assert.equal(propertiesOf(after).n, 2);
      assertError(await post(space, feature('a', {}, { version: 0 }, { type: 'Point', coordinates: [5, 6] })), 409, 'mergeConflict', 'geometry');
      // The written side changing the geometry, HEAD the properties.
      const written = await post(space, feature('a', {}, { version: 1 }, { type: 'Point', coordinates: [7, 8] }));
      assert.equal(written.status, 200, written.text);
      const last = await get(space, 'a');
      assert.deepEqual([last.geometry?.coordinates, propertiesOf(last).n], [[7, 8, 0], 2]);
    });

    test('a transactional batch with one conflict writes nothing and takes no version; a non-transactional one reports it', async () => {
      const space = await spaceWithA({ name: 'x' });
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(feature('b', { name: 'y' })) })).status, 200);
      assert.equal((await post(space, feature('a', { name: 'A' }, { version: 1 }))).status, 200);
      const batch = collection(feature('b', { name: 'B' }, { version: 1 }), feature('a', { name: 'clash' }, { version: 0 }), feature('c', { n: 1 }));
      assertError(await post(space, batch), 409, 'mergeConflict', 'with id a', 'properties.name');
      assert.equal(await head(space), 2);
      assert.equal(propertiesOf(await get(space, 'b')).name, 'y');
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/c`)).status, 404);
      const partial = await post(space, batch, '?transactional=false');
      assert.equal(partial.status, 200, partial.text);
      assert.deepEqual(partial.body.failed?.map((failure) => [failure.id, failure.position]), [['a', 1]]);
      assert.match(partial.body.failed?.[0].message ?? '', /cannot be merged.*properties\.name/);
      assert.deepEqual([partial.body.inserted, partial.body.updated], [['c'], ['b']]);
      assert.equal(await head(space), 3);
      assert.equal(propertiesOf(await get(space, 'a')).name, 'A');
    });

    test('without an ORIGIN, from another space, or in a space keeping one version, writes behave as before', async () => {
      const space = await spaceWithA({ name: 'x', n: 1 });
      assert.equal((await post(space, feature('a', { name: 'A' }, { version: 0 }))).status, 200);
      // No version in the namespace: a patch applies to HEAD.
      assert.equal((await post(space, feature('a', { name: 'B' }))).status, 200);
      assert.equal(propertiesOf(await get(space, 'a')).name, 'B');
      // A feature copied verbatim from another space carries that space's version.
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(feature('a', { name: 'copied' }, { space: 'elsewhere', version: 0 })) })).status, 200);
      assert.equal(propertiesOf(await get(space, 'a')).name, 'copied');
      // A version at or past the feature's own is not stale.
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features/a`, { body: feature('a', { name: 'later' }, { version: 99 }) })).status, 200);
      const plain = await createSpace(hub);
      await call(hub, 'PUT', `/hub/spaces/${plain}/features`, { body: collection(feature('a', { name: 'x' })) });
      await call(hub, 'PUT', `/hub/spaces/${plain}/features`, { body: collection(feature('a', { name: 'y' })) });
      const replaced = await call(hub, 'PUT', `/hub/spaces/${plain}/features`, { body: collection(feature('a', { name: 'z' }, { version: 0 })) });
      assert.equal(replaced.status, 200, replaced.text);
      assert.equal(propertiesOf(await get(plain, 'a')).name, 'z');
      assertError(await post(space, feature('a', {}, { version: 'one' })), 400, 'invalidFeature', 'namespace version');
      assertError(await post(space, feature('a', {}, { version: -1 })), 400, 'invalidFeature', 'namespace version');
    });

    test('an ORIGIN older than the oldest kept version is a 409 naming it', async () => {
      const space = await spaceWithA({ n: 0 }, 2);
      for (let n = 1; n <= 3; n++) assert.equal((await post(space, feature('a', { n }))).status, 200);
      assertError(await post(space, feature('a', { m: 1 }, { version: 0 })), 409, 'originNotKept', 'with id a', 'version 0', 'oldest version kept is 2');
      assert.equal((await post(space, feature('a', { m: 1 }, { version: 2 }))).status, 200);
      assert.deepEqual(propertiesOf(await get(space, 'a')), { n: 3, m: 1 });
    });

    test('a composite space merges in its own layer, with the versions its features carry', async () => {
      const base = await createSpace(hub, { versionsToKeep: 5 });
      const composite = await createSpace(hub, { versionsToKeep: 5, extends: { spaceId: base } });
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${composite}/features`, { body: collection(feature('a', { x: 0, y: 0 })) })).status, 200);
      const read = await get(composite, 'a');
      assert.equal(nsOf(read).version, 0);
      const whole = (properties: Record<string, unknown>) => ({ ...read, properties: { ...read.properties, ...properties } });
      assert.equal((await post(composite, whole({ x: 1 }), '?e=merge')).status, 200);
      assert.equal((await post(composite, whole({ y: 1 }), '?e=merge')).status, 200);
      assert.deepEqual(propertiesOf(await get(composite, 'a')), { x: 1, y: 1 });
      assertError(await post(composite, whole({ x: 2 }), '?e=merge'), 409, 'mergeConflict', 'properties.x');
    });

    test('a virtual space merges each feature in the upstream holding it, at that upstream\'s versions', async () => {
      const [a, b] = [await createSpace(hub, { versionsToKeep: 5 }), await createSpace(hub, { versionsToKeep: 5 })];
      await call(hub, 'PUT', `/hub/spaces/${a}/features`, { body: collection(feature('x', { name: 'x', n: 0 })) });
      await call(hub, 'PUT', `/hub/spaces/${b}/features`, { body: collection(feature('y', { name: 'y', n: 0 })) });
      await call(hub, 'PUT', `/hub/spaces/${b}/features`, { body: collection(feature('z', {})) });
      const group = await createSpace(hub, { storage: { id: 'virtualspace', params: { virtualspace: { group: [a, b] } } } });
      const [x, y] = [await get(group, 'x'), await get(group, 'y')];
      assert.deepEqual([nsOf(x).space, nsOf(x).version, nsOf(y).space, nsOf(y).version], [a, 0, b, 0]);
      const whole = (read: FeatureJson, properties: Record<string, unknown>) => ({ ...read, properties: { ...read.properties, ...properties } });
      await post(a, feature('x', { name: 'X' }));
      await post(b, feature('y', { name: 'Y' }));
      const merged = await post(group, collection(whole(x, { n: 1 }), whole(y, { n: 2 })), '?e=merge');
      assert.equal(merged.status, 200, merged.text);
      assert.deepEqual([propertiesOf(await get(a, 'x')), propertiesOf(await get(b, 'y'))], [{ name: 'X', n: 1 }, { name: 'Y', n: 2 }]);
      assertError(await post(group, collection(whole(x, { n: 1 }), whole(y, { name: 'clash' })), '?e=merge'), 409, 'mergeConflict', 'with id y');
      assert.equal(await head(b), 3);
    });

    test('hostile namespace versions are a 400, never a 5xx', async () => {
      const space = await spaceWithA({ n: 0 });
      for (const version of [1e300, 2 ** 53, 0.5, '0', [0], { v: 0 }, true]) {
        assertError(await post(space, feature('a', { n: 1 }, { version })), 400, 'invalidFeature', 'namespace version');
      }
      const far = await post(space, feature('a', { n: 1 }, { version: 2 ** 53 - 1 }));
      assert.equal(far.status, 200, far.text);
    });

    test('failed batches leave no version and change nothing, whatever refuses them', async () => {
      const schema = { type: 'object', properties: { properties: { type: 'object', properties: { name: { type: 'string' } } } } };
      for (const keep of [1, 10]) {
        const owner = `merges-failed-${keep}`;
        const urm = ownerRights(owner);
        urm['xyz-hub'].accessConnectors = [{ id: 'schema-validator' }];
        const { token } = await issueToken(hub, { aid: owner, urm, limits: { maxFeaturesPerSpace: 2 } });
        const headers = { authorization: `Bearer ${token}` };
        const created = await call(hub, 'POST', '/hub/spaces', { headers, body: { title: 'failed batches', versionsToKeep: keep,
          processors: [{ id: 'schema-validator', params: { schema } }] } });
        assert.equal(created.status, 200, created.text);
        const space = created.body.id as string;
        const write = (method: string, path: string, body: object) => call(hub, method, `/hub/spaces/${space}/${path}`, { headers, body });
        assert.equal((await write('PUT', 'features', collection(feature('a', { name: 'x' })))).status, 200);
        assert.equal((await write('PUT', 'features', collection(feature('a', { name: 'y' })))).status, 200);
        const stored = (await call(hub, 'GET', `/hub/spaces/${space}/iterate`)).text;
        const refusals: Array<[TestResponse, number, string]> = [
          [await write('PUT', 'features', collection(feature('b', { name: 'b' }), feature('c', { name: 5 }))), 400, 'schemaValidationFailed'],
          [await write('PUT', 'features', collection(feature('b', { name: 'b' }), feature('c', { name: 'c' }))), 403, 'featureQuotaReached'],
          [await write('POST', 'features?e=error', collection(feature('b', { name: 'b' }), feature('a', { name: 'z' }))), 409, 'featureExists'],
          [await write('PATCH', 'features/missing', feature('missing', { name: 'm' })), 404, 'featureNotFound'],
        ];
        if (keep > 1) {
          refusals.push([await write('POST', 'features', collection(feature('b', { name: 'b' }), feature('a', { name: 'z' }, { version: 0 }))), 409, 'mergeConflict']);
        }
        for (const [response, status, code] of refusals) assertError(response, status, code);
        assert.equal(await head(space), 1, `versionsToKeep ${keep}`);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/iterate`)).text, stored);
      }
    });

    test('a merging write needs readFeatures: a write-only caller gets 403 and learns nothing of HEAD', async () => {
      const owner = 'merges-write-only';
      const full = { authorization: `Bearer ${(await issueToken(hub, { aid: owner, urm: ownerRights(owner) })).token}` };
      const writeOnly = { authorization: `Bearer ${(await issueToken(hub, { aid: owner, urm: { 'xyz-hub': {
        createFeatures: [{ owner }], updateFeatures: [{ owner }], deleteFeatures: [{ owner }] } } })).token}`, accept: 'application/x-empty' };
      const created = await call(hub, 'POST', '/hub/spaces', { headers: full, body: { title: 'write-only merges', versionsToKeep: 10 } });
      const space = created.body.id as string;
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { headers: full, body: collection(feature('a', { secret: 'x' })) });
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { headers: full, body: collection(feature('a', { secret: 'y' })) });
      for (const [query, body] of [['', feature('a', { secret: 'z' }, { version: 0 })], ['', feature('a', { n: 1 }, { version: 0 })],
        ['?e=replace', feature('a', { n: 1 }, { version: 0 })]] as const) {
        const refused = await call(hub, 'POST', `/hub/spaces/${space}/features${query}`, { headers: writeOnly, body });
        assertError(refused, 403, 'insufficientRights');
        assert.ok(!/secret|version of the head/.test(refused.text), refused.text);
      }
      assert.equal(await head(space), 1);
      // Read at HEAD, the same caller's patch is a plain write.
      const current = await call(hub, 'POST', `/hub/spaces/${space}/features`, { headers: writeOnly, body: feature('a', { n: 1 }, { version: 1 }) });
      assert.equal(current.status, 204, current.text);
      assert.equal(await head(space), 2);
    });

    test('two nodes: concurrent writers of different properties of one feature all succeed, each with its own version', async () => {
      const writers = 8;
      const space = await spaceWithA(Object.fromEntries(Array.from({ length: writers }, (_, n) => [`p${n}`, 0])), 100);
      // Each sends the whole feature as read at version 0 with its one property changed: merged, not replaced.
      const read = await get(space, 'a');
      const answers = await Promise.all(Array.from({ length: writers }, (_, n) =>
        onNode(n, 'POST', `/hub/spaces/${space}/features?e=merge`, { ...read, properties: { ...read.properties, [`p${n}`]: n + 1 } })));
      for (const answer of answers) assert.equal(answer.status, 200, answer.body);
      // A worker is told by the socket it holds, looked up after the answer: a connection already gone tells none.
      assert.equal(new Set(answers.map((answer) => answer.worker).filter((worker) => worker !== undefined)).size, 2, 'both nodes wrote');
      const merged = await get(space, 'a');
      assert.deepEqual(propertiesOf(merged), Object.fromEntries(Array.from({ length: writers }, (_, n) => [`p${n}`, n + 1])));
      assert.equal(await head(space), writers);
      const states = await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=*`);
      assert.deepEqual((states.body.features ?? []).map((state) => nsOf(state).version), Array.from({ length: writers + 1 }, (_, n) => n));
      // Concurrent writers of the same property: one wins, the others conflict, none is lost silently.
      const clashing = await Promise.all(Array.from({ length: 4 }, (_, n) =>
        onNode(n, 'POST', `/hub/spaces/${space}/features?e=merge`, { ...merged, properties: { ...merged.properties, p0: 100 + n } })));
      assert.deepEqual(clashing.map((answer) => answer.status).sort(), [200, 409, 409, 409]);
      const winner = clashing.findIndex((answer) => answer.status === 200);
      assert.equal(propertiesOf(await get(space, 'a')).p0, 100 + winner);
    });

    test('two nodes: concurrent writers get versions without gaps or duplicates, and every version reads back', async () => {
      const writers = 16;
      const space = await createSpace(hub, { versionsToKeep: 100 });
      const answers = await Promise.all(Array.from({ length: writers }, (_, n) =>
        onNode(n, 'PUT', `/hub/spaces/${space}/features`, collection(feature(`f${n}`, { n })))));
      for (const answer of answers) assert.equal(answer.status, 200, answer.body);
      // A worker is told by the socket it holds, looked up after the answer: a connection already gone tells none.
      assert.equal(new Set(answers.map((answer) => answer.worker).filter((worker) => worker !== undefined)).size, 2, 'both nodes wrote');
      const versionOf = new Map<string, number>(answers.map((answer) => {
        const written = (JSON.parse(answer.body) as { features: FeatureJson[] }).features[0];
        return [written.id, nsOf(written).version as number];
      }));
      assert.deepEqual([...versionOf.values()].sort((x, y) => x - y), Array.from({ length: writers }, (_, n) => n));
      assert.equal(await head(space), writers - 1);
      for (let version = 0; version < writers; version++) {
        const read: TestResponse = await call(hub, 'GET', `/hub/spaces/${space}/search?version=${version}&limit=100`);
        assert.equal(read.status, 200, read.text);
        const expected = [...versionOf].filter(([, at]) => at <= version).map(([id]) => id).sort();
        assert.deepEqual((read.body.features ?? []).map((item) => item.id).sort(), expected, `version ${version}`);
      }
    });
  });
}
