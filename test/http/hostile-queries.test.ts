// Black-box tests of hostile query strings on both engines (long lists, deep filter paths, malformed text, the DELETE id comma rule) and of filters and transforms across the engines' read pages.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_JSON_DEPTH } from '../../src/core/json-limits.js';
import { MAX_LIST_VALUES } from '../../src/http/query/raw-query.js';
import { assertRefused, assertUsable, deepText } from '../helpers/hostile.js';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const list = (count: number, make: (i: number) => string, separator = ','): string =>
  Array.from({ length: count }, (_, i) => make(i)).join(separator);

/** More features than SQLite's read page (2,000 rows) and PostgreSQL's (1,000), twice over. */
const PAGE_CROSSING = 4500;

for (const backend of BACKENDS) {
  describe(`hostile queries (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    const stored = 3;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub);
      const features = ['t1', 't2', 't3'].map((id, i) => ({
        type: 'Feature', id, geometry: { type: 'Point', coordinates: [i, i] },
        properties: { n: i, '@ns:com:here:xyz': { tags: [id] } },
      }));
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
      assert.equal(response.status, 200, response.text);
    });
    after(async () => { await hub.stop(); });

    const path = (rest: string) => `/hub/spaces/${space}${rest}`;

    async function refused(method: string, rest: string, status: number, code: string): Promise<void> {
      assertRefused(await call(hub, method, path(rest)), status, code, `${method} ${rest.slice(0, 80)}`);
      await assertUsable(hub, space, stored);
    }

    test('lists past the limit are refused with 400 on every read, count and delete, up to thousands of values', async () => {
      for (const count of [MAX_LIST_VALUES + 1, 1000, 2000]) {
        const tags = list(count, (i) => `t${i}`);
        for (const read of ['/search', '/iterate', '/count']) {
          await refused('GET', `${read}?tags=${tags}`, 400, 'tooManyValues');
          await refused('GET', `${read}?tags=${list(count, (i) => `t${i}`, '+')}`, 400, 'tooManyValues');
          await refused('GET', `${read}?p.n=${list(count, String)}`, 400, 'tooManyValues');
          await refused('GET', `${read}?${list(count, () => 'p.n=1', '&')}`, 400, 'tooManyValues');
        }
        for (const read of ['/search', '/iterate', '/features?id=t1&']) {
          await refused('GET', `${read}${read.endsWith('&') ? '' : '?'}selection=${list(count, (i) => `p.x${i}`)}`, 400, 'tooManyValues');
        }
        await refused('GET', `/search?tags=${list(count / 2, (i) => `t${i}`)}&tags=${list(count / 2 + 1, (i) => `u${i}`)}`, 400, 'tooManyValues');
        await refused('GET', `/features?id=${list(count, (i) => `i${i}`)}`, 400, 'tooManyValues');
        await refused('DELETE', `/features?id=${list(count, (i) => `i${i}`)}`, 400, 'tooManyValues');
        await refused('DELETE', `/features?id=${list(count, (i) => `i${i}`, '%2C')}`, 400, 'tooManyValues');
        await refused('DELETE', `/features?tags=${tags}`, 400, 'tooManyValues');
        await refused('PUT', `/features?addTags=${tags}`, 400, 'tooManyValues');
      }
    });

    test('lists at the limit work on every read, count and delete, also all at once', async () => {
      const tags = list(MAX_LIST_VALUES - 1, (i) => `x${i}`) + ',t1';
      const values = list(MAX_LIST_VALUES - 1, (i) => String(i + 100)) + ',1';
      const reads: Array<[string, string[]]> = [
        [`/search?tags=${tags}`, ['t1']],
        [`/iterate?tags=${tags}`, ['t1']],
        [`/search?tags=${list(MAX_LIST_VALUES - 1, (i) => `x${i}`, '+')}+t1`, []],
        [`/search?p.n=${values}`, ['t2']],
        [`/search?${list(MAX_LIST_VALUES, () => 'p.n>=1', '&')}`, ['t2', 't3']],
        [`/features?id=${list(MAX_LIST_VALUES - 1, (i) => `i${i}`)},t3`, ['t3']],
        [`/search?selection=${list(MAX_LIST_VALUES, (i) => `p.x${i}`)}`, ['t1', 't2', 't3']],
        // Both filters at their limits in one statement.
        [`/search?tags=${tags}&p.n=${list(MAX_LIST_VALUES - 1, (i) => String(i + 100))}`, []],
        [`/search?tags=${tags}&p.n=${values}&selection=${list(MAX_LIST_VALUES, (i) => `p.x${i}`)}`, []],
      ];
      for (const [read, ids] of reads) {
        const response = await call(hub, 'GET', path(read));
        assert.equal(response.status, 200, `${read.slice(0, 60)}: ${response.text.slice(0, 300)}`);
        assert.deepEqual(response.body.features?.map((feature) => feature.id), ids, read.slice(0, 60));
      }
      const count = await call(hub, 'GET', path(`/count?tags=${tags}&p.n=${values}`));
      assert.equal(count.status, 200, count.text);
      const none = await call(hub, 'DELETE', path(`/features?tags=${list(MAX_LIST_VALUES, (i) => `x${i}`)}`));
      assert.equal(none.status, 204, none.text);
      const noIds = await call(hub, 'DELETE', path(`/features?id=${list(MAX_LIST_VALUES, (i) => `i${i}`, '%2C')}`));
      assert.equal(noIds.status, 204, noIds.text);
      await assertUsable(hub, space, stored);
    });

    test('property filter paths past the depth limit are refused; at the limit they work with every operator', async () => {
      for (const segments of [MAX_JSON_DEPTH + 1, 300, 1000]) {
        const key = `p.${list(segments, () => 'a', '.')}`;
        for (const filter of [`${key}=1`, `${key}=x`, `${key}!=1`, `${key}>1`, `${key}=cs=1`, `${key}=.null`]) {
          await refused('GET', `/search?${filter}`, 400, 'propertyPathTooDeep');
        }
        await refused('GET', `/count?f.${list(segments, () => '0', '.')}=1`, 400, 'propertyPathTooDeep');
        await refused('GET', `/iterate?p.${list(segments, () => 'a', '.')}=1`, 400, 'propertyPathTooDeep');
      }
      for (const key of [`p.${list(MAX_JSON_DEPTH, () => 'a', '.')}`, `p.${list(MAX_JSON_DEPTH, () => '0', '.')}`, `f.${list(MAX_JSON_DEPTH, () => 'b', '.')}`]) {
        for (const filter of [`${key}=1`, `${key}=x`, `${key}!=1`, `${key}>1`, `${key}=cs=1`, `${key}=.null`, `${key}!=.null`]) {
          const response = await call(hub, 'GET', path(`/search?${filter}`));
          assert.equal(response.status, 200, `${filter.slice(-12)}: ${response.text.slice(0, 300)}`);
          const expected = filter.endsWith('=.null') && !filter.endsWith('!=.null') ? 3 : 0;
          assert.equal(response.body.features?.length, expected, filter.slice(-12));
        }
      }
    });

    test('selection paths past the depth limit are refused on every read; at the limit they work', async () => {
      for (const segments of [MAX_JSON_DEPTH + 1, 1000, 7000]) {
        for (const selection of [`p.${list(segments - 1, () => 'a', '.')}`, list(segments, () => 'a', '.')]) {
          for (const read of ['/search?', '/iterate?', '/features?id=t1&', '/features/t1?']) {
            await refused('GET', `${read}selection=${selection}`, 400, 'propertyPathTooDeep');
          }
        }
      }
      const atLimit = await call(hub, 'GET', path(`/search?selection=p.n,p.${list(MAX_JSON_DEPTH - 1, () => 'a', '.')}`));
      assert.equal(atLimit.status, 200, atLimit.text);
      assert.deepEqual(atLimit.body.features?.map((feature) => feature.properties), [{ n: 0 }, { n: 1 }, { n: 2 }]);
    });

    test('malformed text in the query is refused: invalid UTF-8 escapes, lone surrogates and deep JSON in =cs= values', async () => {
      await refused('GET', '/search?p.name=%ED%A0%80', 400, 'invalidPropertyFilter');
      await refused('GET', '/search?p.%ED%A0%80=1', 400, 'invalidPropertyFilter');
      await refused('GET', '/search?tags=%ED%A0%80', 400, 'invalidParameter');
      await refused('GET', '/features?id=%ED%A0%80', 400, 'invalidParameter');
      await refused('GET', `/search?p.n=cs=${encodeURIComponent('["\\ud800"]')}`, 400, 'malformedUnicode');
      await refused('GET', `/search?p.n=cs=${encodeURIComponent('[{"\\udc00":1}]')}`, 400, 'malformedUnicode');
      await refused('GET', `/search?p.n=cs=${encodeURIComponent(`[${deepText(MAX_JSON_DEPTH)}]`)}`, 400, 'jsonTooDeep');
      await refused('GET', `/search?p.n=cs=${'['.repeat(5000)}${']'.repeat(5000)}`, 400, 'jsonTooDeep');
      const atLimit = await call(hub, 'GET', path(`/search?p.n=cs=${encodeURIComponent(`[${deepText(MAX_JSON_DEPTH - 2)}]`)}`));
      assert.equal(atLimit.status, 200, atLimit.text);
    });

    test('DELETE /features splits ids on encoded commas too; other routes and single deletes keep them literal', async () => {
      const other = await createSpace(hub);
      const features = ['ITA', 'BRA', 'FRA', 'A,B'].map((id) => ({ type: 'Feature', id, geometry: null, properties: {} }));
      await call(hub, 'PUT', `/hub/spaces/${other}/features`, { body: { type: 'FeatureCollection', features } });
      const literal = await call(hub, 'GET', `/hub/spaces/${other}/features?id=ITA%2CBRA`);
      assert.deepEqual(literal.body.features, [], 'GET keeps %2C inside one id');
      const literalPair = await call(hub, 'GET', `/hub/spaces/${other}/features?id=A%2CB`);
      assert.deepEqual(literalPair.body.features?.map((feature) => feature.id), ['A,B']);
      const deleted = await call(hub, 'DELETE', `/hub/spaces/${other}/features?id=ITA%2CBRA`);
      assert.equal(deleted.status, 204);
      const left = await call(hub, 'GET', `/hub/spaces/${other}/search`);
      assert.deepEqual(left.body.features?.map((feature) => feature.id), ['FRA', 'A,B']);
      const mixed = await call(hub, 'DELETE', `/hub/spaces/${other}/features?id=FRA%2C%2C,nothing`, { headers: { accept: 'application/json' } });
      assert.equal(mixed.status, 200, mixed.text);
      assert.deepEqual(mixed.body.deleted, ['FRA']);
      const one = await call(hub, 'DELETE', `/hub/spaces/${other}/features/A%2CB`);
      assert.equal(one.status, 204);
      await assertUsable(hub, other, 0);
    });

    describe('filters and transforms across the read pages', () => {
      let paged: string;
      const ids = Array.from({ length: PAGE_CROSSING }, (_, i) => `f${String(i).padStart(5, '0')}`);
      before(async () => {
        paged = await createSpace(hub);
        const features = ids.map((id, i) => ({
          type: 'Feature', id, geometry: { type: 'Point', coordinates: [i / 1000, 1, 7] },
          properties: { i, even: i % 2 === 0, drop: 'x', '@ns:com:here:xyz': { tags: i % 3 === 0 ? ['three'] : ['other'] } },
        }));
        // Written in reverse halves, so that insertion order differs from id order.
        const second = features.slice(0, PAGE_CROSSING / 2);
        const first = features.slice(PAGE_CROSSING / 2);
        for (const part of [first, second]) {
          const response = await call(hub, 'PUT', `/hub/spaces/${paged}/features`, { body: { type: 'FeatureCollection', features: part }, headers: { accept: 'application/x-empty' } });
          assert.equal(response.status, 204, response.text);
        }
      });
      const inserted = () => [...ids.slice(PAGE_CROSSING / 2), ...ids.slice(0, PAGE_CROSSING / 2)];

      async function readAll(query: string): Promise<FeatureJson[]> {
        const response = await call(hub, 'GET', `/hub/spaces/${paged}/search?limit=100000&${query}`);
        assert.equal(response.status, 200, response.text.slice(0, 300));
        return response.body.features ?? [];
      }

      test('a property filter, a tags filter and both with selection and force2D return every match once, in insertion order', async () => {
        const even = inserted().filter((id) => Number(id.slice(1)) % 2 === 0);
        const three = inserted().filter((id) => Number(id.slice(1)) % 3 === 0);
        assert.deepEqual((await readAll('p.even=true')).map((feature) => feature.id), even);
        assert.deepEqual((await readAll('tags=three')).map((feature) => feature.id), three);
        const selected = await readAll('selection=p.i&force2D=true');
        assert.deepEqual(selected.map((feature) => feature.id), inserted());
        for (const feature of selected) {
          assert.deepEqual(Object.keys(feature.properties), ['i'], feature.id);
          assert.equal(feature.properties.i, Number(feature.id.slice(1)));
          assert.equal((feature.geometry?.coordinates as number[]).length, 2);
        }
        const both = await readAll('tags=three&p.even=false&force2D=true&selection=p.even');
        assert.deepEqual(both.map((feature) => feature.id), three.filter((id) => Number(id.slice(1)) % 2 === 1));
        assert.ok(both.every((feature) => feature.properties.even === false && (feature.geometry?.coordinates as number[]).length === 2));
      });

      test('iterate pages through the filtered features with handles, each once, in insertion order', async () => {
        const seen: string[] = [];
        let handle = '0';
        for (let turn = 0; turn < 20; turn++) {
          const response = await call(hub, 'GET', `/hub/spaces/${paged}/iterate?limit=1300&handle=${handle}&p.even=true&selection=p.i&force2D=true`);
          assert.equal(response.status, 200, response.text.slice(0, 300));
          seen.push(...(response.body.features ?? []).map((feature) => feature.id));
          if (response.body.handle === undefined) break;
          handle = response.body.handle;
        }
        assert.deepEqual(seen, inserted().filter((id) => Number(id.slice(1)) % 2 === 0));
        const count = await call(hub, 'GET', `/hub/spaces/${paged}/count?tags=three`);
        assert.equal(count.body.count, PAGE_CROSSING / 3);
      });
    });
  });
}
