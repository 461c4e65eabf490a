// Black-box tests of hostile write bodies on both engines: nesting past the limit, lone surrogates, corrupted large bodies; each is refused with a 4xx, writes nothing and leaves the space usable.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_ID_LENGTH } from '../../src/core/id-limits.js';
import { MAX_JSON_DEPTH } from '../../src/core/json-limits.js';
import { assertRefused, assertUsable, deepText } from '../helpers/hostile.js';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const FEATURE_HEAD = '{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]}';
const valid = (id: string) => `${FEATURE_HEAD},"id":"${id}","properties":{"name":"${id}"}}`;
/** A feature whose properties are `{"a":…}` nested so that the feature itself is `levels` deep. */
const deepFeature = (id: string, levels: number) => `${FEATURE_HEAD},"id":"${id}","properties":${deepText(levels - 1)}}`;
const collection = (...features: string[]) => `{"type":"FeatureCollection","features":[${features.join(',')}]}`;
const modifications = (...features: string[]) =>
  `{"type":"FeatureModificationList","modifications":[{"onFeatureNotExists":"create","featureData":${collection(...features)}}]}`;

/** Features of about 1 KiB each, enough of them to pass the 8 MiB streaming threshold. */
function bigFeatures(count: number): string[] {
  const padding = 'x'.repeat(900);
  return Array.from({ length: count }, (_, i) => `${FEATURE_HEAD},"id":"big${i}","properties":{"i":${i},"pad":"${padding}"}}`);
}

for (const backend of BACKENDS) {
  describe(`hostile write bodies (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    let stored: number;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub);
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { rawBody: collection(valid('base1'), valid('base2')) });
      assert.equal(response.status, 200, response.text);
      stored = 2;
    });
    after(async () => { await hub.stop(); });

    const features = (path = '') => `/hub/spaces/${space}/features${path}`;

    async function refusedAndHarmless(method: string, path: string, rawBody: string, code: string, label: string): Promise<string> {
      const response = await call(hub, method, path, { rawBody });
      assertRefused(response, 400, code, label);
      await assertUsable(hub, space, stored);
      return response.body.errorMessage as string;
    }

    test('ids longer than a URL path segment may be are refused, so every stored id stays addressable', async () => {
      const long = 'x'.repeat(MAX_ID_LENGTH + 1);
      const feature = JSON.stringify({ type: 'Feature', id: long, geometry: null, properties: {} });
      const message = await refusedAndHarmless('PUT', features(), collection(valid('ok'), feature), 'invalidFeature', 'long feature id');
      assert.match(message, /position 1/);
      await refusedAndHarmless('PUT', `${features()}?prefixId=${'p'.repeat(10)}`,
        collection(JSON.stringify({ type: 'Feature', id: 'x'.repeat(MAX_ID_LENGTH - 5), geometry: null, properties: {} })), 'invalidFeature', 'prefixed');
      assertRefused(await call(hub, 'POST', '/hub/spaces', { body: { id: long, title: 'long' } }), 400, 'spaceValidation', 'long space id');
      const longest = 's'.repeat(MAX_ID_LENGTH);
      assert.equal((await call(hub, 'POST', '/hub/spaces', { body: { id: longest, title: 'longest' } })).status, 200);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${longest}`)).status, 200, 'the longest id is addressable');
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${longest}`)).status, 204);
    });

    test('a feature nested past the limit is refused on every write path, naming it, up to 20,000 levels', async () => {
      for (const levels of [MAX_JSON_DEPTH + 1, 1200, 20000]) {
        const deep = deepFeature('deep', levels);
        const message = await refusedAndHarmless('PUT', features(), collection(valid('ok1'), deep), 'jsonTooDeep', `PUT ${levels}`);
        assert.match(message, levels === MAX_JSON_DEPTH + 1 ? /feature at position 1/ : /features\[1\]/);
        assert.match(message, new RegExp(`${MAX_JSON_DEPTH} levels`));
        await refusedAndHarmless('POST', features(), collection(deep), 'jsonTooDeep', `POST ${levels}`);
        await refusedAndHarmless('POST', features(), modifications(valid('ok2'), deep), 'jsonTooDeep', `modification list ${levels}`);
        await refusedAndHarmless('PUT', features(), deep, 'jsonTooDeep', `root Feature ${levels}`);
        await refusedAndHarmless('PUT', features('/deep'), deep, 'jsonTooDeep', `PUT one ${levels}`);
        await refusedAndHarmless('PATCH', features('/base1'), deep, 'jsonTooDeep', `PATCH one ${levels}`);
        const response = await call(hub, 'GET', features('/base1'));
        assert.equal((response.body as unknown as FeatureJson).properties.name, 'base1', 'the patched feature is unchanged');
      }
    });

    test('deep members outside the properties count as well: geometry, extra members, modification rules', async () => {
      const deepGeometry = `{"type":"Feature","id":"g","geometry":{"type":"Point","coordinates":${'['.repeat(MAX_JSON_DEPTH)}${']'.repeat(MAX_JSON_DEPTH)}}}`;
      await refusedAndHarmless('PUT', features(), collection(deepGeometry), 'jsonTooDeep', 'geometry');
      await refusedAndHarmless('PUT', features(), collection(`{"type":"Feature","id":"x","extra":${deepText(20000)}}`), 'jsonTooDeep', 'extra member');
      const body = `{"type":"FeatureModificationList","modifications":[{"onFeatureExists":${deepText(20000)},"featureIds":["base1"]}]}`;
      await refusedAndHarmless('POST', features(), body, 'jsonTooDeep', 'modification rule');
      await refusedAndHarmless('PUT', features(), `{"type":"FeatureCollection","bbox":${deepText(20000)},"features":[]}`, 'jsonTooDeep', 'collection member');
    });

    test('a feature nested exactly to the limit is stored, found by a filter on its deepest value, and every read still works', async () => {
      const path = `p.${Array.from({ length: MAX_JSON_DEPTH - 1 }, () => 'a').join('.')}`;
      const response = await call(hub, 'PUT', features(), { rawBody: collection(deepFeature('atLimit', MAX_JSON_DEPTH)) });
      assert.equal(response.status, 200, response.text.slice(0, 300));
      stored++;
      await assertUsable(hub, space, stored);
      for (const filter of [`${path}=1`, `${path}>=1`, `${path}!=2`]) {
        const found = await call(hub, 'GET', `/hub/spaces/${space}/search?${filter}`);
        assert.equal(found.status, 200, found.text.slice(0, 300));
        assert.deepEqual(found.body.features?.map((feature) => feature.id), ['atLimit'], filter.slice(-10));
      }
      const one = await call(hub, 'GET', features('/atLimit?selection=p.a'));
      assert.equal(one.status, 200);
      const statistics = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.equal(statistics.status, 200);
    });

    test('space definitions nested past the limit are refused on create and update', async () => {
      const before = await call(hub, 'GET', '/hub/spaces');
      for (const levels of [MAX_JSON_DEPTH + 1, 20000]) {
        const body = `{"title":"deep","listeners":${deepText(levels - 1)}}`;
        assertRefused(await call(hub, 'POST', '/hub/spaces', { rawBody: body }), 400, 'jsonTooDeep', `create ${levels}`);
        assertRefused(await call(hub, 'PATCH', `/hub/spaces/${space}`, { rawBody: body }), 400, 'jsonTooDeep', `update ${levels}`);
      }
      const afterwards = await call(hub, 'GET', '/hub/spaces');
      assert.deepEqual(afterwards.body, before.body, 'no space was created or changed');
      await assertUsable(hub, space, stored);
    });

    test('lone surrogates are refused wherever a body holds text, naming the feature and the member', async () => {
      const cases: Array<[string, string, string, RegExp]> = [
        ['property value', 'PUT', collection(valid('ok'), `{"type":"Feature","id":"s","properties":{"name":"x\\ud800y"}}`), /feature at position 1 .*properties\.name/],
        ['property name', 'PUT', collection(`{"type":"Feature","id":"s","properties":{"\\udc00":1}}`), /feature at position 0 .*properties\./],
        ['id', 'PUT', collection(`{"type":"Feature","id":"s\\ud800","properties":{}}`), /at id/],
        ['tag', 'PUT', collection(`{"type":"Feature","id":"s","properties":{"@ns:com:here:xyz":{"tags":["ok","\\ud800"]}}}`), /tags\[1\]/],
        ['nested value', 'POST', collection(`{"type":"Feature","id":"s","properties":{"a":[{"b":"\\udfff"}]}}`), /properties\.a\[0\]\.b/],
        ['modification feature', 'POST', modifications(`{"type":"Feature","id":"s","properties":{"n":"\\ud800"}}`), /properties\.n/],
        ['modification featureIds', 'POST', '{"type":"FeatureModificationList","modifications":[{"onFeatureExists":"delete","featureIds":["base1","\\ud800"]}]}', /featureIds/],
      ];
      for (const [label, method, body, where] of cases) {
        const message = await refusedAndHarmless(method, features(), body, 'malformedUnicode', label);
        assert.match(message, where, label);
      }
      await refusedAndHarmless('PUT', features('/s'), '{"type":"Feature","properties":{"n":"\\ud800"}}', 'malformedUnicode', 'PUT one');
      await refusedAndHarmless('PATCH', features('/base1'), '{"type":"Feature","properties":{"n":"\\ud800"}}', 'malformedUnicode', 'PATCH one');
      for (const body of ['{"title":"t\\ud800"}', '{"title":"t","description":"\\udc00"}', '{"title":"t","client":{"\\ud800":1}}']) {
        assertRefused(await call(hub, 'POST', '/hub/spaces', { rawBody: body }), 400, 'malformedUnicode', body);
        assertRefused(await call(hub, 'PATCH', `/hub/spaces/${space}`, { rawBody: body }), 400, 'malformedUnicode', body);
      }
      const read = await call(hub, 'GET', `/hub/spaces/${space}`);
      assert.equal(read.body.title, 'test space');
      await assertUsable(hub, space, stored);
    });

    test('surrogate pairs are well-formed text: stored and read back alike on both engines', async () => {
      const response = await call(hub, 'PUT', features(), { rawBody: collection('{"type":"Feature","id":"pair\\ud83d\\ude00","properties":{"\\ud83d\\ude00":"a\\ud83d\\ude00b"}}') });
      assert.equal(response.status, 200, response.text);
      stored++;
      const read = await call(hub, 'GET', features(`/${encodeURIComponent('pair😀')}`));
      assert.equal(read.status, 200, read.text);
      assert.equal((read.body as unknown as FeatureJson).properties['😀'], 'a😀b');
      const found = await call(hub, 'GET', `/hub/spaces/${space}/search?p.${encodeURIComponent('😀')}=${encodeURIComponent('a😀b')}`);
      assert.deepEqual(found.body.features?.map((feature) => feature.id), ['pair😀']);
      await assertUsable(hub, space, stored);
    });

    test('bodies past the 8 MiB streaming threshold: corrupted ones are refused like small ones, duplicate members resolve like JSON.parse', async () => {
      const big = bigFeatures(9500);
      const body = collection(...big);
      assert.ok(body.length > 9 * 1024 * 1024);
      const corrupted: Array<[string, string, string]> = [
        ['stray comma', collection(...big.slice(0, 5000), '', ...big.slice(5000)), 'invalidJsonFeatures'],
        ['leading comma', `{"type":"FeatureCollection","features":[,${big.join(',')}]}`, 'invalidJsonFeatures'],
        ['trailing comma', `{"type":"FeatureCollection","features":[${big.join(',')},]}`, 'invalidJsonFeatures'],
        ['truncated', body.slice(0, body.length - 3), 'invalidJsonFeatures'],
        ['garbage after the root', `${body}x`, 'invalidJsonFeatures'],
        ['second root', `${body}{}`, 'invalidJsonFeatures'],
        ['deep feature at the end', collection(...big, deepFeature('deep', 20000)), 'jsonTooDeep'],
        ['lone surrogate at the end', collection(...big, '{"type":"Feature","id":"s","properties":{"n":"\\ud800"}}'), 'malformedUnicode'],
      ];
      for (const [label, text, code] of corrupted) await refusedAndHarmless('PUT', features(), text, code, label);

      const duplicate = `{"type":"FeatureCollection","features":[${big.join(',')}],"features":[${valid('last')}]}`;
      const response = await call(hub, 'PUT', features(), { rawBody: duplicate, headers: { accept: 'application/x-empty' } });
      assert.equal(response.status, 204, response.text.slice(0, 300));
      stored++;
      await assertUsable(hub, space, stored);
      assert.equal((await call(hub, 'GET', features('/last'))).status, 200);
      assert.equal((await call(hub, 'GET', features('/big0'))).status, 404, 'only the last features member is written');
    });
  });
}
