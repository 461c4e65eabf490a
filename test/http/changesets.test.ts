// Black-box tests of changesets, DELETE /changesets, the statistics' version range and pruning (ADR 002, issue 23 parts 2 and 3), on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { prunedTo } from '../helpers/history-rows.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties: { ...properties, [NS]: { tags: [] } } });

interface ChangesetJson {
  version: number;
  author: string;
  createdAt: number;
  inserted: { type: string; features: Array<{ id: string; properties: Record<string, unknown> }> };
  updated: { type: string; features: Array<{ id: string; properties: Record<string, unknown> }> };
  deleted: { type: string; features: Array<{ id: string; properties: Record<string, unknown> }> };
  nextPageToken?: string;
}

/** A changeset as `kind:id=n` texts, in the order of the answer: easy to compare whole. */
function summary(changeset: ChangesetJson): string[] {
  return (['inserted', 'updated', 'deleted'] as const).flatMap((kind) =>
    changeset[kind].features.map((feature) => `${kind}:${feature.id}=${String(feature.properties.n)}`));
}

/** The property n of a feature answered alone. */
const nOf = (response: TestResponse): unknown => (response.body.properties as Record<string, unknown> | undefined)?.n;

const versionsOf = (response: TestResponse): Record<string, ChangesetJson> => response.body.versions as unknown as Record<string, ChangesetJson>;

for (const backend of BACKENDS) {
  describe(`changesets (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, features: object[]) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
    const changesets = (space: string, query = '') => call(hub, 'GET', `/hub/spaces/${space}/changesets${query}`);

    /** Versions 0-3 of the reference hub's own test, plus a delete at 4: A B | A' C | B' C' | A'' C'' | -B. */
    async function referenceHistory(): Promise<string> {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await put(space, [point('A', { n: 1 }), point('B', { n: 1 })]);
      await put(space, [point('A', { n: 2 }), point('C', { n: 1 })]);
      await put(space, [point('B', { n: 2 }), point('C', { n: 2 })]);
      await put(space, [point('A', { n: 3 }), point('C', { n: 3 })]);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/B`)).status, 204);
      return space;
    }

    test('each version: inserted, updated and deleted told apart, with author and time', async () => {
      const space = await referenceHistory();
      const all = await changesets(space);
      assert.equal(all.status, 200, all.text);
      assert.equal(all.body.type, 'ChangesetCollection');
      assert.equal(all.body.startVersion, 0);
      assert.equal(all.body.endVersion, 4);
      assert.equal(all.body.nextPageToken, undefined);
      const versions = versionsOf(all);
      const admin = ((await call(hub, 'GET', `/hub/spaces/${space}/features/A`)).body.properties as Record<string, Record<string, unknown>>)[NS].author;
      assert.deepEqual(Object.keys(versions), ['0', '1', '2', '3', '4']);
      assert.deepEqual(summary(versions[0]), ['inserted:A=1', 'inserted:B=1']);
      assert.deepEqual(summary(versions[1]), ['inserted:C=1', 'updated:A=2']);
      assert.deepEqual(summary(versions[2]), ['updated:B=2', 'updated:C=2']);
      assert.deepEqual(summary(versions[3]), ['updated:A=3', 'updated:C=3']);
      // The deleted feature is answered as it last was.
      assert.deepEqual(summary(versions[4]), ['deleted:B=2']);
      for (const [key, changeset] of Object.entries(versions)) {
        assert.equal(changeset.version, Number(key));
        assert.equal(changeset.author, admin);
        assert.ok(Math.abs(changeset.createdAt - Date.now()) < 60_000, String(changeset.createdAt));
        assert.equal(changeset.inserted.type, 'FeatureCollection');
      }
      // Written states carry the version that wrote them.
      assert.equal((versions[3].updated.features[0].properties[NS] as Record<string, unknown>).version, 3);

      const one = await call(hub, 'GET', `/hub/spaces/${space}/changesets/1`);
      assert.equal(one.status, 200, one.text);
      assert.equal(one.body.type, 'Changeset');
      assert.equal(one.body.version, 1);
      assert.deepEqual(summary(one.body as unknown as ChangesetJson), ['inserted:C=1', 'updated:A=2']);
    });

    test('ranges: startVersion/endVersion inclusive, versionRef=a..b after a up to b, clipped to what is kept', async () => {
      const space = await referenceHistory();
      const keys = async (query: string) => {
        const response = await changesets(space, query);
        assert.equal(response.status, 200, `${query}: ${response.text}`);
        return [Object.keys(versionsOf(response)).join(','), response.body.startVersion, response.body.endVersion];
      };
      assert.deepEqual(await keys('?startVersion=1&endVersion=3'), ['1,2,3', 1, 3]);
      assert.deepEqual(await keys('?startVersion=2'), ['2,3,4', 2, 4]);
      assert.deepEqual(await keys('?endVersion=1'), ['0,1', 0, 1]);
      assert.deepEqual(await keys('?versionRef=1..3'), ['2,3', 2, 3]);
      assert.deepEqual(await keys('?versionRef=2..HEAD'), ['3,4', 3, 4]);
      assert.deepEqual(await keys('?startVersion=0&endVersion=99'), ['0,1,2,3,4', 0, 4]);
      assertError(await changesets(space, '?startVersion=3&endVersion=1'), 400, 'invalidParameter', 'startVersion');
      assertError(await changesets(space, '?versionRef=3'), 400, 'invalidParameter', 'versionRef');
      assertError(await changesets(space, '?versionRef=1..3&startVersion=1'), 400, 'invalidParameter', 'not both');
      assertError(await changesets(space, '?startVersion=-1'), 400, 'invalidParameter', 'startVersion');
      assertError(await changesets(space, '?startVersion=9'), 404, 'changesetsNotFound');
    });

    test('author and time filters', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const { token } = await issueToken(hub, { aid: 'changeset-writer', urm: { 'xyz-hub': { createFeatures: [{}], updateFeatures: [{}], readFeatures: [{}] } } });
      await put(space, [point('a', { n: 1 })]);
      const between = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 20));
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [point('b', { n: 1 })] }, headers: { authorization: `Bearer ${token}` } });
      await put(space, [point('a', { n: 2 })]);
      const byAuthor = await changesets(space, '?author=changeset-writer');
      assert.equal(byAuthor.status, 200, byAuthor.text);
      assert.deepEqual(Object.keys(versionsOf(byAuthor)), ['1']);
      assert.equal(versionsOf(byAuthor)[1].author, 'changeset-writer');
      const admin = ((await call(hub, 'GET', `/hub/spaces/${space}/features/a`)).body.properties as Record<string, Record<string, unknown>>)[NS].author as string;
      assert.deepEqual(Object.keys(versionsOf(await changesets(space, `?author=${admin}`))), ['0', '2']);
      assertError(await changesets(space, '?author=nobody'), 404, 'changesetsNotFound', 'by that author');
      assert.deepEqual(Object.keys(versionsOf(await changesets(space, `?startTime=${between}`))), ['1', '2']);
      assert.deepEqual(Object.keys(versionsOf(await changesets(space, `?endTime=${between}`))), ['0']);
      assert.deepEqual(Object.keys(versionsOf(await changesets(space, `?startTime=${new Date(between).toISOString()}`))), ['1', '2']);
      assertError(await changesets(space, '?startTime=yesterday'), 400, 'invalidParameter', 'startTime');
    });

    test('pages of limit states, a version split across pages, the tokens of a range and of one changeset', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      await put(space, Array.from({ length: 5 }, (_, index) => point(`f${index}`, { n: 0 })));
      await put(space, [point('f0', { n: 1 }), point('f1', { n: 1 }), point('g', { n: 1 })]);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features?id=f2,f3`)).status < 300, true);
      const collected: string[] = [];
      const pages: string[][] = [];
      let query = '?limit=2';
      for (let page = 0; page < 10; page++) {
        const response = await changesets(space, query);
        assert.equal(response.status, 200, response.text);
        const entries = Object.entries(versionsOf(response)).flatMap(([version, changeset]) => summary(changeset).map((text) => `${version}/${text}`));
        assert.ok(entries.length <= 2, entries.join(' '));
        pages.push(entries);
        collected.push(...entries);
        const token = response.body.nextPageToken as string | undefined;
        if (token === undefined) break;
        query = `?limit=2&pageToken=${token}`;
      }
      assert.deepEqual(collected, ['0/inserted:f0=0', '0/inserted:f1=0', '0/inserted:f2=0', '0/inserted:f3=0', '0/inserted:f4=0',
        '1/inserted:g=1', '1/updated:f0=1', '1/updated:f1=1', '2/deleted:f2=0', '2/deleted:f3=0']);
      assert.equal(pages.length, 5, JSON.stringify(pages));
      assertError(await changesets(space, '?pageToken=garbage'), 400, 'invalidPageToken');

      const one: string[] = [];
      let oneQuery = '?limit=1';
      for (let page = 0; page < 10; page++) {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/changesets/1${oneQuery}`);
        assert.equal(response.status, 200, response.text);
        one.push(...summary(response.body as unknown as ChangesetJson));
        const token = response.body.nextPageToken as string | undefined;
        if (token === undefined) break;
        oneQuery = `?limit=1&pageToken=${token}`;
      }
      assert.deepEqual(one, ['inserted:g=1', 'updated:f0=1', 'updated:f1=1']);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/changesets/2?pageToken=1_0_0`), 400, 'invalidPageToken');
    });

    test('a space keeping one version has no changesets; refusals of versions and spaces', async () => {
      const plain = await createSpace(hub);
      await put(plain, [point('a')]);
      assertError(await changesets(plain), 400, 'noHistory');
      const fresh = await createSpace(hub, { versionsToKeep: 5 });
      assertError(await changesets(fresh), 404, 'changesetsNotFound');
      const space = await createSpace(hub, { versionsToKeep: 2 });
      for (let n = 0; n < 4; n++) await put(space, [point('a', { n })]);
      assert.deepEqual(Object.keys(versionsOf(await changesets(space))), ['2', '3']);
      assertError(await changesets(space, '?endVersion=1'), 400, 'versionTooOld', 'oldest version that can be read is 2');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/changesets/1`), 400, 'versionTooOld', 'oldest version that can be read is 2');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/changesets/7`), 400, 'versionNotYet');
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/changesets/x:y`), 400, 'invalidParameter');
      assertError(await call(hub, 'GET', `/hub/spaces/nope-${space}/changesets`), 404, 'spaceOfFeaturesNotFound');
      const composite = await createSpace(hub, { versionsToKeep: 5, extends: { spaceId: space } });
      assertError(await changesets(composite), 400, 'historyOfLayers');
    });

    test('DELETE /changesets?version=lt=N: older versions unreadable at once, their rows pruned; statistics name the range', async () => {
      const space = await createSpace(hub, { versionsToKeep: 100 });
      for (let n = 0; n < 6; n++) await put(space, [point('a', { n }), point(`new${n}`, { n })]);
      const statistics = async () => {
        const body = (await call(hub, 'GET', `/hub/spaces/${space}/statistics`)).body;
        return [body.minVersion, body.maxVersion];
      };
      assert.deepEqual(await statistics(), [{ value: 0, estimated: false }, { value: 5, estimated: false }]);
      await prunedTo(hub, space, { states: 5, versions: 6 });
      for (const bad of ['', '?version=3', '?version=lt=0', '?version=gt=3', '?version=lt=x', '?version=lt=9']) {
        assertError(await call(hub, 'DELETE', `/hub/spaces/${space}/changesets${bad}`), 400, 'invalidParameter');
      }
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/changesets?version=lt=4`)).status, 204);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=3`), 400, 'versionTooOld', 'oldest version that can be read is 4');
      assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=4`)), 4);
      assert.deepEqual(await statistics(), [{ value: 4, estimated: false }, { value: 5, estimated: false }]);
      assert.deepEqual(Object.keys(versionsOf(await changesets(space))), ['4', '5']);
      // The states ended at 4 and later stay (the changeset of 4 needs the one it replaced), and versions 4 and 5.
      await prunedTo(hub, space, { states: 2, versions: 2 });
      // Moving the point back changes nothing.
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/changesets?version=lt=2`)).status, 204);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=3`), 400, 'versionTooOld');
    });

    test('pruning: versions past versionsToKeep and a lowered versionsToKeep go, at once for reads and later for rows', async () => {
      const space = await createSpace(hub, { versionsToKeep: 3 });
      for (let n = 0; n < 8; n++) await put(space, [point('a', { n })]);
      // Kept: 5, 6, 7, and the state that ended at 5 for the changeset of 5.
      await prunedTo(hub, space, { states: 3, versions: 3 });
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=4`), 400, 'versionTooOld', 'oldest version that can be read is 5');
      assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=5`)), 5);
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { versionsToKeep: 2 } })).status, 200);
      assertError(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=5`), 400, 'versionTooOld', 'oldest version that can be read is 6');
      await prunedTo(hub, space, { states: 2, versions: 2 });
      assert.equal((await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { versionsToKeep: 1 } })).status, 200);
      await prunedTo(hub, space, { states: 0, versions: 0 });
      assert.equal(nOf(await call(hub, 'GET', `/hub/spaces/${space}/features/a?version=7`)), 7);
    });

    test('a caller without readFeatures learns nothing of the history; changing it needs manageSpaces', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await put(space, [point('secret', { n: 0 })]);
      await put(space, [point('secret', { n: 1 })]);
      const outsider = await issueToken(hub, { aid: 'changesets-outsider', urm: ownerRights('changesets-outsider') });
      const reader = await issueToken(hub, { aid: 'changesets-reader', urm: { 'xyz-hub': { readFeatures: [{}] } } });
      for (const path of ['changesets', 'changesets?versionRef=0..1', 'changesets/0', 'changesets/99', 'changesets?pageToken=0_0_0']) {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/${path}`, { headers: { authorization: `Bearer ${outsider.token}` } });
        assertError(response, 403, 'insufficientRights');
        assert.ok(!response.text.includes('secret'), `${path}: ${response.text}`);
      }
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/changesets`, { headers: { authorization: `Bearer ${reader.token}` } })).status, 200);
      for (const token of [outsider.token, reader.token]) {
        assertError(await call(hub, 'DELETE', `/hub/spaces/${space}/changesets?version=lt=1`, { headers: { authorization: `Bearer ${token}` } }), 403, 'insufficientRights');
      }
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/features/secret?version=0`)).status, 200);
    });
  });
}

describe('pruning on two PostgreSQL nodes over one database', { skip: BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run' }, () => {
  let a: HubProcess;
  let b: HubProcess;
  before(async () => {
    a = await startHub({ backend: 'postgres' });
    b = await startHub({ backend: 'postgres', storage: a.storage });
  });
  after(async () => {
    await b?.stop();
    await a?.stop();
  });

  test('both nodes write and prune one space at once: the rows end as versionsToKeep says, and both read the same', async () => {
    const space = await createSpace(a, { versionsToKeep: 3 });
    const write = (n: number) => call(n % 2 === 0 ? a : b, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [point('a', { n })] } });
    for (let n = 0; n < 30; n += 2) {
      const answers = await Promise.all([write(n), write(n + 1)]);
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
    }
    await prunedTo(a, space, { states: 3, versions: 3 });
    for (const node of [a, b]) {
      assertError(await call(node, 'GET', `/hub/spaces/${space}/features/a?version=26`), 400, 'versionTooOld', 'oldest version that can be read is 27');
      const changesets = await call(node, 'GET', `/hub/spaces/${space}/changesets`);
      assert.deepEqual(Object.keys(versionsOf(changesets)), ['27', '28', '29']);
    }
  });
});
