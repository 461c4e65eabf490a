// Black-box tests of the search filter grammar: tags (API.md 5.4), p.*/f.* property filters (5.5), limit (1.8) and the query rules of 1.2/1.9.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const NS = '@ns:com:here:xyz';

const point = (x: number, y: number) => ({ type: 'Point', coordinates: [x, y] });

/** Six features covering every JSON type the operators must tell apart; written in this order. */
const GRAMMAR_FEATURES = [
  {
    type: 'Feature', id: 'A', geometry: point(1, 2),
    properties: {
      name: 'Alpha', capacity: 50000, sport: 'association, football', code: 1234, open: true, label: 'museum',
      list: ['red', 'blue'], items: [{ k: 1, v: 'x' }], nested: { level: 2 }, empty: null,
      formula: 'x=y', words: 'two words', plus: 'a+b',
      [NS]: { tags: ['Stadium', 'soccer'] },
    },
  },
  {
    type: 'Feature', id: 'B', geometry: { type: 'LineString', coordinates: [[0, 0], [1, 1]] },
    properties: {
      name: 'Beta', capacity: 90000, sport: 'football', code: '01234', open: false, label: 'true',
      list: ['green'], items: [{ k: 2 }], nested: { level: 3 },
      [NS]: { tags: ['stadium'] },
    },
  },
  {
    type: 'Feature', id: 'C', geometry: { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] },
    properties: {
      name: 'Gamma', capacity: 20000, sport: 'American football', code: '1234', open: 'true', label: '01234',
      list: 'red',
      [NS]: { tags: ['a,b', 'c+d'] },
    },
  },
  {
    type: 'Feature', id: 'D', geometry: null,
    properties: { name: 'Delta', empty: 'value', [NS]: { tags: ['Münster', 'a'] } },
  },
  {
    type: 'Feature', id: 'E', geometry: { type: 'MultiPoint', coordinates: [[3, 3]] },
    properties: { name: '', capacity: 70000.5, [NS]: { tags: ['b'] } },
  },
  {
    type: 'Feature', id: 'F', geometry: point(5, 5),
    properties: { [NS]: { tags: ['~MyTag', '@Private'] } },
  },
];

const ALL = ['A', 'B', 'C', 'D', 'E', 'F'];

const idsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);

for (const backend of BACKENDS) {
  describe(`feature search filters (${backend})`, () => {
    let hub: HubProcess;
    let space: string;

    async function search(query: string): Promise<TestResponse> {
      return call(hub, 'GET', `/hub/spaces/${space}/search?${query}`);
    }

    async function searchIds(query: string): Promise<string[]> {
      const response = await search(query);
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.type, 'FeatureCollection');
      return idsOf(response);
    }

    /** One test per query: the ids found, in insertion order. */
    function cases(title: string, table: Array<[query: string, expected: string[]]>): void {
      describe(title, () => {
        for (const [query, expected] of table) {
          test(`${query} → [${expected.join(',')}]`, async () => {
            assert.deepEqual(await searchIds(query), expected);
          });
        }
      });
    }

    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub);
      const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`,
        { body: { type: 'FeatureCollection', features: GRAMMAR_FEATURES } });
      assert.equal(put.status, 200, put.text);
    });
    after(async () => { await hub.stop(); });

    test('without filters every feature comes back in insertion order', async () => {
      assert.deepEqual(await searchIds(''), ALL);
    });

    cases('tags', [
      ['tags=stadium', ['A', 'B']],
      ['tags=stadium+soccer', ['A']],
      ['tags=soccer,munster', ['A', 'D']],
      ['tags=soccer&tags=munster', ['A', 'D']],
      ['tags=a+b', []],
      ['tags=a,b', ['D', 'E']],
      // An encoded comma is part of the tag, an encoded plus a literal plus.
      ['tags=a%2Cb', ['C']],
      ['tags=c%2Bd', ['C']],
      ['tags=c+d', []],
      // The filter tags are normalized like stored tags (API.md 4.3).
      ['tags=STADIUM', ['A', 'B']],
      ['tags=M%C3%BCnster', ['D']],
      ['tags=~MyTag', ['F']],
      ['tags=~mytag', []],
      ['tags=%40Private', ['F']],
      ['tags=%40private', []],
      ['tags=', ALL],
      ['tags=stadium&p.capacity>50000', ['B']],
    ]);

    cases('comparison operators, short and long forms', [
      ['p.capacity=50000', ['A']],
      ['p.capacity!=50000', ['B', 'C', 'E']],
      ['p.capacity>50000', ['B', 'E']],
      ['p.capacity=gt=50000', ['B', 'E']],
      ['p.capacity>=50000', ['A', 'B', 'E']],
      ['p.capacity=gte=50000', ['A', 'B', 'E']],
      ['p.capacity<50000', ['C']],
      ['p.capacity=lt=50000', ['C']],
      ['p.capacity<=50000', ['A', 'C']],
      ['p.capacity=lte=50000', ['A', 'C']],
      ['p.capacity=70000.5', ['E']],
      // Operator characters percent-encoded by form-encoding clients.
      ['p.capacity%3E50000', ['B', 'E']],
      ['p.name%21=Alpha', ['B', 'C', 'D', 'E']],
    ]);

    cases('several values are OR-ed, repeated keys AND-ed', [
      ['p.capacity=50000,90000', ['A', 'B']],
      ['p.name=Alpha,Gamma,Nobody', ['A', 'C']],
      ['p.capacity>=50000&p.capacity<=70000', ['A']],
      ['p.capacity>=20000&p.name=Gamma,Beta', ['B', 'C']],
      ['p.capacity>10&p.capacity<10', []],
      ['p.name=Alpha&p.name=Beta', []],
    ]);

    cases('value typing', [
      // 01234 parses as the number 1234, so it matches A's number and not B's string "01234".
      ['p.code=01234', ['A']],
      ['p.code=1234', ['A']],
      ['p.code=%271234%27', ['C']],
      ['p.code="01234"', ['B']],
      ['p.code=%2201234%22', ['B']],
      ['p.open=true', ['A']],
      ['p.open=false', ['B']],
      ['p.open=\'true\'', ['C']],
      ['p.label=%27museum%27', ['A']],
      ['p.label=museum', ['A']],
      ['p.label=true', []],
      ['p.label=\'true\'', ['B']],
      ['p.label=01234', []],
      ['p.label=\'01234\'', ['C']],
      ['p.name=', ['E']],
      ['p.name=%27%27', []],
    ]);

    cases('encoding of values', [
      ['p.sport=association%2C%20football', ['A']],
      ['p.sport=association,football', ['B']],
      ['p.sport=American+football', ['C']],
      ['p.sport=American%20football,football', ['B', 'C']],
      ['p.words=two+words', ['A']],
      ['p.plus=a%2Bb', ['A']],
      ['p.plus=a+b', []],
      ['p.formula=x=y', ['A']],
      ['p.formula=x%3Dy', ['A']],
    ]);

    cases('a stray = after > or < is ignored', [
      ['p.capacity>50000=', ['B', 'E']],
      ['p.capacity<50000=', ['C']],
      ['p.capacity>=50000=', ['A', 'B', 'E']],
    ]);

    cases('array containment', [
      ['p.list=cs=red', ['A']],
      ['p.list@>red', ['A']],
      ['p.list%40%3Ered', ['A']],
      ['p.list=cs=green,blue', ['A', 'B']],
      ['p.list=cs=re', []],
      ['p.items=cs={"k":1}', ['A']],
      ['p.items=cs=%7B%22k%22%3A2%7D', ['B']],
      ['p.items=cs={"k":1%2C"v":"x"}', ['A']],
      ['p.items=cs={"k":1%2C"v":"y"}', []],
      ['p.items=cs={"k":3}', []],
      [`p.${NS}.tags=cs=soccer`, ['A']],
      [`p.${NS}.tags@>stadium`, ['A', 'B']],
      ['p.%40ns%3Acom%3Ahere%3Axyz.tags=cs=soccer', ['A']],
    ]);

    cases('.null', [
      ['p.empty=.null', ['A', 'B', 'C', 'E', 'F']],
      ['p.empty!=.null', ['D']],
      ['p.name=.null', ['F']],
      ['p.name!=.null', ['A', 'B', 'C', 'D', 'E']],
      ['p.capacity=.null,50000', ['A', 'D', 'F']],
    ]);

    cases('nested paths', [
      ['p.nested.level=3', ['B']],
      ['p.nested.level>=2', ['A', 'B']],
      ['p.nested.missing=.null', ALL],
    ]);

    cases('f.id compares strings', [
      ['f.id=B', ['B']],
      ['f.id=\'B\'', ['B']],
      ['f.id=B,D,Z', ['B', 'D']],
      ['f.id=lte=B', ['A', 'B']],
      ['f.id>D', ['E', 'F']],
      ['f.id!=A', ['B', 'C', 'D', 'E', 'F']],
    ]);

    cases('f.geometry.type', [
      ['f.geometry.type=Point', ['A', 'F']],
      ['f.geometry.type=point', ['A', 'F']],
      ['f.geometry.type=MULTIPOINT', ['E']],
      ['f.geometry.type=Polygon,LineString', ['B', 'C']],
      ['f.geometry.type=.null', ['D']],
      ['f.geometry.type!=.null', ['A', 'B', 'C', 'E', 'F']],
    ]);

    cases('parameters that are not filters are ignored', [
      ['name=Alpha', ALL],
      ['name!=Alpha', ALL],
      ['name%21=Alpha', ALL],
      ['P.name=Alpha', ALL],
      ['clientId=dhpy&testNoValue=', ALL],
      ['skipCache=true&p.name=Gamma', ['C']],
      ['clientId=dhpy&&p.name=Alpha&', ['A']],
      ['&p.name=Beta&&', ['B']],
    ]);

    test('property names with quotes and backslashes can be searched', async () => {
      const odd = await createSpace(hub);
      const put = await call(hub, 'PUT', `/hub/spaces/${odd}/features`, { body: { type: 'FeatureCollection', features: [
        { type: 'Feature', id: 'q', properties: { 'say"hi': 1, 'back\\slash': 2, "it's": 3 } },
        { type: 'Feature', id: 'r', properties: { 'say"hi': 2 } },
      ] } });
      assert.equal(put.status, 200, put.text);
      const found = async (query: string) => {
        const response = await call(hub, 'GET', `/hub/spaces/${odd}/search?${query}`);
        assert.equal(response.status, 200, response.text);
        return idsOf(response);
      };
      assert.deepEqual(await found('p.say%22hi=1'), ['q']);
      assert.deepEqual(await found('p.say%22hi>=1'), ['q', 'r']);
      assert.deepEqual(await found('p.back%5Cslash=2'), ['q']);
      assert.deepEqual(await found('p.it%27s=3'), ['q']);
    });

    test('a filter without an operator is a 400', async () => {
      const response = await search('p.name');
      assert.equal(response.status, 400);
      assert.equal(response.body.code, 'invalidPropertyFilter');
    });

    test('f.createdAt and f.updatedAt compare the namespace timestamps', async () => {
      const timed = await createSpace(hub);
      const first = await call(hub, 'PUT', `/hub/spaces/${timed}/features/early`, { body: { type: 'Feature', properties: {} } });
      assert.equal(first.status, 200, first.text);
      const createdAt = (first.body as unknown as FeatureJson).properties[NS]?.createdAt as number;
      // Wait for the clock to move on, so that the second feature gets a later timestamp.
      while (Date.now() <= createdAt) await new Promise((resolve) => setTimeout(resolve, 2));
      const second = await call(hub, 'PUT', `/hub/spaces/${timed}/features/late`, { body: { type: 'Feature', properties: {} } });
      assert.equal(second.status, 200, second.text);

      const found = async (query: string) => idsOf(await call(hub, 'GET', `/hub/spaces/${timed}/search?${query}`));
      assert.deepEqual(await found(`f.createdAt=${createdAt}`), ['early']);
      assert.deepEqual(await found(`f.createdAt<=${createdAt}`), ['early']);
      assert.deepEqual(await found(`f.createdAt>${createdAt}`), ['late']);
      assert.deepEqual(await found(`f.createdAt=gte=${createdAt}`), ['early', 'late']);
      assert.deepEqual(await found(`f.updatedAt>${createdAt}`), ['late']);
    });

    test('filters on the namespace: its tags (f.tags and the full path), its space, and a user property of the same name', async () => {
      const tagged = await createSpace(hub);
      const body = {
        type: 'FeatureCollection',
        features: [
          { type: 'Feature', id: 'red', properties: { tags: 'plain', [NS]: { tags: ['red', 'warm'] } } },
          { type: 'Feature', id: 'blue', properties: { tags: ['red'], [NS]: { tags: ['blue'] } } },
          { type: 'Feature', id: 'none', properties: {} },
        ],
      };
      const written = await call(hub, 'PUT', `/hub/spaces/${tagged}/features`, { body });
      assert.equal(written.status, 200, written.text);
      const found = async (query: string) => idsOf(await call(hub, 'GET', `/hub/spaces/${tagged}/search?${query}`));
      assert.deepEqual(await found('f.tags=cs=red'), ['red']);
      assert.deepEqual(await found('f.tags=cs=warm,blue'), ['red', 'blue']);
      assert.deepEqual(await found(`p.${NS}.tags=cs=blue`), ['blue']);
      assert.deepEqual(await found('p.tags=cs=red'), ['blue'], 'a user property named tags is not the namespace');
      assert.deepEqual(await found('p.tags=plain'), ['red']);
      assert.deepEqual(await found(`p.${NS}.space=${tagged}`), ['red', 'blue', 'none']);
      assert.deepEqual(await found(`p.${NS}.space=other`), []);
    });

    describe('limit', () => {
      test('limit keeps the first features in insertion order', async () => {
        assert.deepEqual(await searchIds('limit=2'), ['A', 'B']);
        assert.deepEqual(await searchIds('limit=2&p.capacity>=20000'), ['A', 'B']);
        assert.deepEqual(await searchIds('limit=100000'), ALL);
      });

      test('the parameter name is case-insensitive', async () => {
        assert.deepEqual(await searchIds('LIMIT=1'), ['A']);
      });

      for (const limit of ['0', '100001', 'abc', '-1', '1.5', '']) {
        test(`limit=${limit} is a 400`, async () => {
          const response = await search(`limit=${limit}`);
          assert.equal(response.status, 400);
          assert.equal(response.body.type, 'ErrorResponse');
          assert.equal(response.body.error, 'IllegalArgument');
          assert.equal(response.body.code, 'limitOutOfRange');
          assert.equal(response.body.errorMessage, 'The parameter limit must be between 1 and 100000.');
        });
      }

      test('the default limit is 30000', async () => {
        const large = await createSpace(hub);
        const features = Array.from({ length: 30001 }, (_, index) => ({ type: 'Feature', id: `n${index}` }));
        const put = await call(hub, 'PUT', `/hub/spaces/${large}/features`, {
          body: { type: 'FeatureCollection', features },
          headers: { accept: 'application/x-empty' },
        });
        assert.equal(put.status, 204, put.text);
        const page = await call(hub, 'GET', `/hub/spaces/${large}/search`);
        assert.equal(page.status, 200);
        const found = idsOf(page);
        assert.equal(found.length, 30000);
        assert.equal(found[0], 'n0');
        assert.equal(found[29999], 'n29999');
      });
    });
  });
}
