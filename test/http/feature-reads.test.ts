// Black-box tests of feature reads: by id, output rules, iterate, count, statistics, ETags, caching and compression (API.md 5.1–5.9, 7).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { type Body, call, createSpace, createSpaceWith, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';

const NS = '@ns:com:here:xyz';

interface FeatureCollectionJson { type: string; features: FeatureJson[] }

/**
 * The countries fixture, with the two features that share the id "-99" renamed: a request
 * may not repeat an id (API.md 1.7), and the renamed ids sort after "AGO".
 */
function loadCountries(): FeatureCollectionJson {
  const collection = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/countries.geo.json'), 'utf8')) as FeatureCollectionJson;
  const renamed: Record<string, string> = { 'Northern Cyprus': 'CYN', Somaliland: 'SOL' };
  for (const feature of collection.features) {
    if (feature.id === '-99') feature.id = renamed[feature.properties.name as string];
  }
  return collection;
}

const COUNTRIES = loadCountries();
const COUNTRY_IDS = COUNTRIES.features.map((feature) => feature.id);

const idsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => feature.id);
const asFeature = (body: Body): FeatureJson => body as unknown as FeatureJson;

/** Every position of a geometry, however deeply nested. */
function positions(coordinates: unknown): number[][] {
  if (!Array.isArray(coordinates)) return [];
  if (typeof coordinates[0] === 'number') return [coordinates as number[]];
  return coordinates.flatMap(positions);
}

interface RawResponse { status: number; headers: IncomingHttpHeaders; body: Buffer }

/** A request through node:http, which (unlike fetch) leaves the body compressed. */
function rawGet(hub: HubProcess, path: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(hub.url + path, { headers: { authorization: `Bearer ${hub.token}`, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end();
  });
}

for (const backend of BACKENDS) {
  describe(`feature reads (${backend})`, () => {
    let hub: HubProcess;
    let countries: string;

    const get = (path: string, headers: Record<string, string> = {}) => call(hub, 'GET', path, { headers });

    const spaceWith = (features: object[], extra: Record<string, unknown> = {}) => createSpaceWith(hub, features, extra);

    const plain = (id: string, properties: Record<string, unknown> = {}) =>
      ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 2] }, properties });

    before(async () => {
      hub = await startHub({ backend });
      countries = await spaceWith(COUNTRIES.features);
    });
    after(async () => { await hub.stop(); });

    describe('GET /features?id=', () => {
      test('returns the features in the requested order; repeated parameters add ids', async () => {
        const response = await get(`/hub/spaces/${countries}/features?id=BEN,AFG&id=ZWE`);
        assert.equal(response.status, 200);
        assert.equal(response.body.type, 'FeatureCollection');
        assert.deepEqual(idsOf(response), ['BEN', 'AFG', 'ZWE']);
        assert.equal(response.body.features?.[0].properties.name, 'Benin');
      });

      test('missing ids are silently absent', async () => {
        const response = await get(`/hub/spaces/${countries}/features?id=BEN,zzz,AFG`);
        assert.equal(response.status, 200);
        assert.deepEqual(idsOf(response), ['BEN', 'AFG']);
      });

      test('?id=zzz answers an empty collection', async () => {
        const response = await get(`/hub/spaces/${countries}/features?id=zzz`);
        assert.equal(response.status, 200);
        assert.equal(response.body.type, 'FeatureCollection');
        assert.deepEqual(response.body.features, []);
      });

      test('an encoded comma stays inside an id, + decodes to a space', async () => {
        const space = await spaceWith([plain('x,y'), plain('x'), plain('y'), plain('a b')]);
        assert.deepEqual(idsOf(await get(`/hub/spaces/${space}/features?id=x%2Cy`)), ['x,y']);
        assert.deepEqual(idsOf(await get(`/hub/spaces/${space}/features?id=y,x`)), ['y', 'x']);
        assert.deepEqual(idsOf(await get(`/hub/spaces/${space}/features?id=a+b`)), ['a b']);
        assert.equal(asFeature((await get(`/hub/spaces/${space}/features/x%2Cy`)).body).id, 'x,y');
      });

      for (const query of ['', '?id=', '?selection=p.name']) {
        test(`no id (${query || 'no query'}) is a 400`, async () => {
          const response = await get(`/hub/spaces/${countries}/features${query}`);
          assert.equal(response.status, 400);
          assert.equal(response.body.code, 'missingFeatureIds');
        });
      }
    });

    describe('GET /features/{id}', () => {
      test('returns the Feature with its namespace', async () => {
        const response = await get(`/hub/spaces/${countries}/features/BEN`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /^application\/geo\+json/);
        const feature = asFeature(response.body);
        assert.equal(feature.type, 'Feature');
        assert.equal(feature.id, 'BEN');
        assert.equal(feature.geometry?.type, 'Polygon');
        assert.equal(feature.properties.name, 'Benin');
        const namespace = feature.properties[NS];
        assert.equal(namespace?.space, countries);
        assert.deepEqual(namespace?.tags, []);
        assert.equal(typeof namespace?.createdAt, 'number');
        assert.equal(typeof namespace?.updatedAt, 'number');
      });

      test('many GETs at once, over two spaces and with unknown ids and spaces among them, each get their own answer', async () => {
        const other = await spaceWith([plain('BEN', { name: 'not Benin' }), plain('solo')]);
        const wanted = COUNTRY_IDS.slice(0, 60).flatMap((id, i) => [
          { space: countries, id, expect: id },
          { space: other, id: i % 2 === 0 ? 'BEN' : 'solo', expect: i % 2 === 0 ? 'BEN' : 'solo' },
          { space: i % 3 === 0 ? countries : 'no-such-space', id: `missing-${i}`, expect: undefined },
        ]);
        const answers = await Promise.all(wanted.map(({ space, id }) => get(`/hub/spaces/${space}/features/${encodeURIComponent(id)}`)));
        answers.forEach((response, i) => {
          const { space, expect } = wanted[i];
          if (expect === undefined) {
            assert.equal(response.status, 404, `${space}/${wanted[i].id}`);
            assert.equal(response.body.code, space === countries ? 'featureNotFound' : 'spaceOfFeaturesNotFound');
            return;
          }
          assert.equal(response.status, 200, `${space}/${expect}: ${response.text}`);
          const feature = asFeature(response.body);
          assert.equal(feature.id, expect);
          assert.equal(feature.properties[NS]?.space, space);
          if (space === other && expect === 'BEN') assert.equal(feature.properties.name, 'not Benin');
        });
      });

      test('an unknown feature is a 404', async () => {
        const response = await get(`/hub/spaces/${countries}/features/zzz`);
        assert.equal(response.status, 404);
        assert.equal(response.body.type, 'ErrorResponse');
        assert.equal(response.body.code, 'featureNotFound');
        assert.equal(response.body.errorMessage, 'The requested resource does not exist.');
      });
    });

    describe('unknown space', () => {
      for (const path of ['/features?id=a', '/features/a', '/search', '/iterate', '/count', '/statistics']) {
        test(`GET ${path} is a 404`, async () => {
          const response = await get(`/hub/spaces/no-such-space${path}`);
          assert.equal(response.status, 404);
          assert.equal(response.body.type, 'ErrorResponse');
          assert.equal(response.body.code, 'spaceOfFeaturesNotFound');
          assert.equal(response.body.errorMessage, 'The resource with this ID does not exist.');
        });
      }
    });

    describe('output rules', () => {
      test('positions are 3D with z = 0 for stored 2D positions', async () => {
        const response = await get(`/hub/spaces/${countries}/search`);
        assert.equal(response.status, 200);
        assert.equal(response.body.features?.length, 180);
        for (const feature of response.body.features ?? []) {
          for (const position of positions(feature.geometry?.coordinates)) {
            assert.equal(position.length, 3, feature.id);
            assert.equal(position[2], 0, feature.id);
          }
        }
        const single = asFeature((await get(`/hub/spaces/${countries}/features/AFG`)).body);
        assert.deepEqual(positions(single.geometry?.coordinates)[0], [61.210817, 35.650072, 0]);
      });

      test('a stored altitude is kept', async () => {
        const space = await spaceWith([{ type: 'Feature', id: 'p', geometry: { type: 'Point', coordinates: [1, 2, 7.5] }, properties: {} }]);
        const feature = asFeature((await get(`/hub/spaces/${space}/features/p`)).body);
        assert.deepEqual(feature.geometry?.coordinates, [1, 2, 7.5]);
      });

      for (const read of ['/features/AFG', '/features?id=AFG', '/search?p.name=Afghanistan', '/iterate?limit=1']) {
        test(`force2D=true returns 2D positions on ${read}`, async () => {
          const separator = read.includes('?') ? '&' : '?';
          const response = await get(`/hub/spaces/${countries}${read}${separator}force2D=true`);
          assert.equal(response.status, 200);
          const feature = response.body.features?.[0] ?? asFeature(response.body);
          assert.equal(feature.id, 'AFG');
          assert.deepEqual(positions(feature.geometry?.coordinates)[0], [61.210817, 35.650072]);
        });
      }

      test('force2D is matched case-insensitively by name; only the exact value true counts', async () => {
        const lower = asFeature((await get(`/hub/spaces/${countries}/features/AFG?force2d=true`)).body);
        assert.equal(positions(lower.geometry?.coordinates)[0].length, 2);
        const upperValue = asFeature((await get(`/hub/spaces/${countries}/features/AFG?force2D=TRUE`)).body);
        assert.equal(positions(upperValue.geometry?.coordinates)[0].length, 3);
      });

      test('selection=p.name keeps only that property and drops the namespace', async () => {
        for (const read of ['/features/BEN?', '/features?id=BEN&', '/search?p.name=Benin&', '/iterate?handle=0&p.name=Benin&']) {
          const response = await get(`/hub/spaces/${countries}${read}selection=p.name`);
          assert.equal(response.status, 200, read);
          const feature = response.body.features?.[0] ?? asFeature(response.body);
          assert.deepEqual(Object.keys(feature).sort(), ['geometry', 'id', 'properties', 'type'], read);
          assert.equal(feature.type, 'Feature');
          assert.equal(feature.id, 'BEN');
          assert.equal(feature.geometry?.type, 'Polygon');
          assert.deepEqual(feature.properties, { name: 'Benin' }, read);
        }
      });

      test('selection of the namespace, of several members, of nothing that exists, and *', async () => {
        const read = async (selection: string) =>
          asFeature((await get(`/hub/spaces/${countries}/features/BEN?${selection}`)).body).properties;
        assert.deepEqual(Object.keys(await read(`selection=p.${NS}`)), [NS]);
        assert.deepEqual(Object.keys(await read(`selection=p.name,p.${NS}`)).sort(), [NS, 'name']);
        assert.deepEqual(Object.keys(await read(`selection=p.name&selection=p.${NS}`)).sort(), [NS, 'name']);
        assert.deepEqual(await read('selection=p.nothing'), {});
        assert.deepEqual(Object.keys(await read('selection=*')).sort(), [NS, 'name']);
      });

      test('selection always keeps id, type and geometry', async () => {
        const feature = asFeature((await get(`/hub/spaces/${countries}/features/BEN?selection=id`)).body);
        assert.equal(feature.type, 'Feature');
        assert.equal(feature.id, 'BEN');
        assert.equal(feature.geometry?.type, 'Polygon');
        assert.deepEqual(feature.properties, {});
      });

      test('a feature without geometry is returned with "geometry": null', async () => {
        const space = await spaceWith([{ type: 'Feature', id: 'bare', properties: { a: 1 } }]);
        for (const read of ['/features/bare', '/features?id=bare', '/search', '/iterate', '/features/bare?selection=p.a']) {
          const response = await get(`/hub/spaces/${space}${read}`);
          assert.equal(response.status, 200, read);
          const feature = response.body.features?.[0] ?? asFeature(response.body);
          assert.ok(Object.hasOwn(feature, 'geometry'), read);
          assert.equal(feature.geometry, null, read);
        }
      });

      test('insertion order is kept after updates', async () => {
        const space = await spaceWith([plain('first'), plain('second'), plain('third')]);
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features/first`, { body: plain('first', { changed: 1 }) });
        assert.equal(put.status, 200, put.text);
        const patch = await call(hub, 'POST', `/hub/spaces/${space}/features`,
          { body: { type: 'FeatureCollection', features: [plain('second', { changed: 2 })] } });
        assert.equal(patch.status, 200, patch.text);
        for (const read of ['/search', '/iterate']) {
          const response = await get(`/hub/spaces/${space}${read}`);
          assert.deepEqual(idsOf(response), ['first', 'second', 'third'], read);
          assert.equal(response.body.features?.[0].properties.changed, 1);
        }
        assert.deepEqual(idsOf(await get(`/hub/spaces/${space}/search?p.changed>=1`)), ['first', 'second']);
      });
    });

    describe('search on the countries', () => {
      test('without filters returns every country in insertion order', async () => {
        const response = await get(`/hub/spaces/${countries}/search`);
        assert.match(response.headers.get('content-type') ?? '', /^application\/geo\+json/);
        assert.deepEqual(idsOf(response), COUNTRY_IDS);
      });

      test('f.id=lte=AGO compares ids as strings', async () => {
        assert.deepEqual(idsOf(await get(`/hub/spaces/${countries}/search?f.id=lte=AGO`)), ['AFG', 'AGO']);
      });

      test('p.name with a space and an OR list', async () => {
        const response = await get(`/hub/spaces/${countries}/search?p.name=United+Kingdom,Benin,United%20States%20of%20America`);
        assert.deepEqual(idsOf(response), ['BEN', 'GBR', 'USA']);
      });

      test('f.geometry.type and limit', async () => {
        const multiPolygons = COUNTRIES.features.filter((feature) => feature.geometry?.type === 'MultiPolygon').map((feature) => feature.id);
        const response = await get(`/hub/spaces/${countries}/search?f.geometry.type=multipolygon&limit=3`);
        assert.deepEqual(idsOf(response), multiPolygons.slice(0, 3));
        assert.deepEqual(idsOf(await get(`/hub/spaces/${countries}/search?f.geometry.type=MultiPolygon`)), multiPolygons);
      });
    });

    describe('iterate', () => {
      async function walk(space: string, query: string): Promise<{ pages: Body[]; ids: string[] }> {
        const pages: Body[] = [];
        let handle: string | undefined = '0';
        while (handle !== undefined) {
          assert.ok(pages.length < 100, 'iteration does not end');
          const response = await get(`/hub/spaces/${space}/iterate?${query}&handle=${handle}`);
          assert.equal(response.status, 200, response.text);
          pages.push(response.body);
          handle = response.body.handle;
        }
        return { pages, ids: pages.flatMap((page) => (page.features ?? []).map((feature) => feature.id)) };
      }

      test('pages through all countries exactly once, in insertion order', async () => {
        const { pages, ids } = await walk(countries, 'limit=50');
        assert.deepEqual(pages.map((page) => page.features?.length), [50, 50, 50, 30]);
        assert.deepEqual(ids, COUNTRY_IDS);
        for (const page of pages.slice(0, 3)) {
          assert.match(page.handle ?? '', /^\d+$/);
          assert.equal(page.nextPageToken, page.handle);
        }
        assert.equal(Object.hasOwn(pages[3], 'handle'), false);
        assert.equal(Object.hasOwn(pages[3], 'nextPageToken'), false);
      });

      test('handles grow numerically', async () => {
        const { pages } = await walk(countries, 'limit=60');
        const handles = pages.slice(0, -1).map((page) => Number(page.handle));
        assert.ok(handles.every((handle, index) => index === 0 || handle > handles[index - 1]), handles.join(','));
      });

      test('a full last page gives a handle, then an empty page without one', async () => {
        const space = await spaceWith(['a', 'b', 'c', 'd'].map((id) => plain(id)));
        const { pages, ids } = await walk(space, 'limit=2');
        assert.deepEqual(pages.map((page) => page.features?.length), [2, 2, 0]);
        assert.deepEqual(ids, ['a', 'b', 'c', 'd']);
        assert.equal(pages[1].handle !== undefined, true);
        assert.equal(pages[2].type, 'FeatureCollection');
        assert.equal(pages[2].handle, undefined);
        assert.equal(pages[2].nextPageToken, undefined);
      });

      test('handle=0 and no handle both start from the beginning', async () => {
        const withoutHandle = await get(`/hub/spaces/${countries}/iterate?limit=5`);
        const fromZero = await get(`/hub/spaces/${countries}/iterate?limit=5&handle=0`);
        assert.deepEqual(idsOf(withoutHandle), COUNTRY_IDS.slice(0, 5));
        assert.deepEqual(idsOf(fromZero), COUNTRY_IDS.slice(0, 5));
        assert.equal(fromZero.body.handle, withoutHandle.body.handle);
      });

      test('the default limit takes a whole small space without a handle', async () => {
        const response = await get(`/hub/spaces/${countries}/iterate`);
        assert.equal(response.body.features?.length, 180);
        assert.equal(response.body.handle, undefined);
      });

      test('stays stable while another request writes between pages', async () => {
        const space = await spaceWith(['f1', 'f2', 'f3', 'f4', 'f5', 'f6'].map((id) => plain(id)));
        const first = await get(`/hub/spaces/${space}/iterate?limit=3`);
        assert.deepEqual(idsOf(first), ['f1', 'f2', 'f3']);
        const write = await call(hub, 'POST', `/hub/spaces/${space}/features`, {
          body: { type: 'FeatureCollection', features: [plain('f1', { v: 2 }), plain('f5', { v: 2 }), plain('f7')] },
        });
        assert.equal(write.status, 200, write.text);
        const second = await get(`/hub/spaces/${space}/iterate?limit=3&handle=${first.body.handle}`);
        assert.deepEqual(idsOf(second), ['f4', 'f5', 'f6']);
        assert.equal(second.body.features?.[1].properties.v, 2);
        const third = await get(`/hub/spaces/${space}/iterate?limit=3&handle=${second.body.handle}`);
        assert.deepEqual(idsOf(third), ['f7']);
        assert.equal(third.body.handle, undefined);
      });

      test('honours tags, p.* and selection', async () => {
        const tagged = (id: string, tags: string[], properties: Record<string, unknown>) =>
          ({ ...plain(id), properties: { ...properties, [NS]: { tags } } });
        const space = await spaceWith([
          tagged('t1', ['red'], { n: 1, name: 'one' }), tagged('t2', ['blue'], { n: 2, name: 'two' }),
          tagged('t3', ['red'], { n: 3, name: 'three' }), tagged('t4', ['red', 'blue'], { n: 4, name: 'four' }),
        ]);
        assert.deepEqual((await walk(space, 'limit=1&tags=red')).ids, ['t1', 't3', 't4']);
        assert.deepEqual((await walk(space, 'limit=1&tags=red+blue')).ids, ['t4']);
        assert.deepEqual((await walk(space, 'limit=2&p.n>=2')).ids, ['t2', 't3', 't4']);
        assert.deepEqual((await walk(space, 'limit=2&tags=red&p.n>1')).ids, ['t3', 't4']);
        const selected = await walk(space, 'limit=3&selection=p.name');
        assert.deepEqual(selected.pages.flatMap((page) => page.features ?? []).map((feature) => feature.properties),
          [{ name: 'one' }, { name: 'two' }, { name: 'three' }, { name: 'four' }]);
      });

      for (const handle of ['abc', '-1', '1.5', '1e3']) {
        test(`handle=${handle} is a 400`, async () => {
          const response = await get(`/hub/spaces/${countries}/iterate?handle=${handle}`);
          assert.equal(response.status, 400);
          assert.equal(response.body.code, 'invalidHandle');
        });
      }

      test('an invalid limit is a 400', async () => {
        const response = await get(`/hub/spaces/${countries}/iterate?limit=0`);
        assert.equal(response.status, 400);
        assert.equal(response.body.code, 'limitOutOfRange');
      });
    });

    describe('count', () => {
      test('counts every feature', async () => {
        const response = await get(`/hub/spaces/${countries}/count`);
        assert.equal(response.status, 200);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        const { etag: _etag, ...body } = response.body;
        assert.deepEqual(body, { type: 'CountResponse', count: 180, estimated: false });
      });

      test('honours tags and property filters', async () => {
        const space = await spaceWith([
          { ...plain('a'), properties: { [NS]: { tags: ['x'] } } },
          { ...plain('b'), properties: { [NS]: { tags: ['x', 'y'] } } },
          { ...plain('c'), properties: { k: 1 } },
        ]);
        const count = async (query: string) => (await get(`/hub/spaces/${space}/count?${query}`)).body.count;
        assert.equal(await count(''), 3);
        assert.equal(await count('tags=x'), 2);
        assert.equal(await count('tags=x+y'), 1);
        assert.equal(await count('tags=y,zzz'), 1);
        assert.equal(await count('p.k=1'), 1);
      });

      test('an empty space counts 0', async () => {
        const space = await createSpace(hub);
        assert.equal((await get(`/hub/spaces/${space}/count`)).body.count, 0);
      });
    });

    describe('statistics', () => {
      interface Item<T> { value: T; estimated: boolean }
      interface PropertyEntry { key: string; count: number; searchable: boolean; datatype?: string }
      interface Statistics {
        type: string;
        count: Item<number>;
        byteSize: Item<number>;
        dataSize: Item<number>;
        bbox: Item<number[]>;
        geometryTypes: Item<string[]>;
        tags: Item<Array<{ key: string; count: number }>>;
        properties: Item<PropertyEntry[]> & { searchable: string };
        etag: string;
      }

      const statisticsOf = async (space: string): Promise<Statistics> => {
        const response = await get(`/hub/spaces/${space}/statistics`);
        assert.equal(response.status, 200, response.text);
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        return response.body as unknown as Statistics;
      };

      const STATISTICS_FEATURES = [
        { type: 'Feature', id: 's1', geometry: { type: 'Point', coordinates: [10, 20] },
          properties: { name: 'a', size: 3, flag: true, [NS]: { tags: ['x', 'y'] } } },
        { type: 'Feature', id: 's2', geometry: { type: 'LineString', coordinates: [[-5, -10], [30, 40]] },
          properties: { name: 'b', size: 4, list: [1], [NS]: { tags: ['y', 'w'] } } },
        { type: 'Feature', id: 's3', properties: { name: 'c', obj: { a: 1 }, [NS]: { tags: ['y', 'x'] } } },
      ];

      test('reports every member as {value, estimated}', async () => {
        const stats = await statisticsOf(await spaceWith(STATISTICS_FEATURES));
        assert.equal(stats.type, 'StatisticsResponse');
        for (const member of ['count', 'byteSize', 'dataSize', 'bbox', 'geometryTypes', 'tags', 'properties'] as const) {
          assert.ok(Object.hasOwn(stats[member], 'value'), member);
          assert.equal(typeof stats[member].estimated, 'boolean', member);
        }
        assert.deepEqual(stats.count, { value: 3, estimated: false });
        assert.ok(stats.dataSize.value > 0);
        assert.equal(stats.byteSize.value, stats.dataSize.value);
        assert.deepEqual(stats.bbox, { value: [-5, -10, 30, 40], estimated: false });
        assert.deepEqual([...stats.geometryTypes.value].sort(), ['LineString', 'Point']);
        assert.deepEqual(stats.tags.value, [{ key: 'y', count: 3 }, { key: 'x', count: 2 }, { key: 'w', count: 1 }]);
        assert.equal(stats.properties.searchable, 'ALL');
        const byKey = new Map(stats.properties.value.map((entry) => [entry.key, entry]));
        assert.deepEqual([...byKey.keys()].sort(), ['flag', 'list', 'name', 'obj', 'size']);
        assert.deepEqual(byKey.get('name'), { key: 'name', count: 3, searchable: true, datatype: 'string' });
        assert.deepEqual(byKey.get('size'), { key: 'size', count: 2, searchable: true, datatype: 'number' });
        assert.deepEqual(byKey.get('flag'), { key: 'flag', count: 1, searchable: true, datatype: 'boolean' });
        assert.deepEqual(byKey.get('list'), { key: 'list', count: 1, searchable: true, datatype: 'array' });
        assert.deepEqual(byKey.get('obj'), { key: 'obj', count: 1, searchable: true, datatype: 'object' });
      });

      test('an empty space has count 0 and bbox []', async () => {
        const stats = await statisticsOf(await createSpace(hub));
        assert.deepEqual(stats.count, { value: 0, estimated: false });
        assert.deepEqual(stats.bbox.value, []);
        assert.deepEqual(stats.geometryTypes.value, []);
        assert.deepEqual(stats.tags.value, []);
        assert.deepEqual(stats.properties.value, []);
      });

      test('the countries', async () => {
        const stats = await statisticsOf(countries);
        assert.equal(stats.count.value, 180);
        // A spatial index may round its boxes outwards (PostGIS keeps them as float4), so allow for that.
        const expected = [-180, -85.609038, 180, 83.64513];
        assert.equal(stats.bbox.value.length, 4);
        stats.bbox.value.forEach((value, index) => assert.ok(Math.abs(value - expected[index]) < 1e-4, `${value} ≈ ${expected[index]}`));
        assert.deepEqual([...stats.geometryTypes.value].sort(), ['MultiPolygon', 'Polygon']);
        assert.deepEqual(stats.tags.value, []);
        assert.deepEqual(stats.properties.value, [{ key: 'name', count: 180, searchable: true, datatype: 'string' }]);
      });

      test('follows writes and deletes', async () => {
        const space = await spaceWith(STATISTICS_FEATURES);
        const removed = await call(hub, 'DELETE', `/hub/spaces/${space}/features/s2`);
        assert.equal(removed.status, 204, removed.text);
        const stats = await statisticsOf(space);
        assert.equal(stats.count.value, 2);
        assert.deepEqual(stats.bbox.value, [10, 20, 10, 20]);
        assert.deepEqual(stats.geometryTypes.value, ['Point']);
        assert.deepEqual(stats.tags.value, [{ key: 'x', count: 2 }, { key: 'y', count: 2 }]);
      });

      test('searchableProperties make the properties PARTIAL', async () => {
        const space = await spaceWith(STATISTICS_FEATURES, { searchableProperties: { name: true } });
        const stats = await statisticsOf(space);
        assert.equal(stats.properties.searchable, 'PARTIAL');
        const byKey = new Map(stats.properties.value.map((entry) => [entry.key, entry]));
        assert.equal(byKey.get('name')?.searchable, true);
        assert.equal(byKey.get('size')?.searchable, false);
      });

      test('changing searchableProperties changes the statistics ETag', async () => {
        const space = await spaceWith(STATISTICS_FEATURES);
        const first = await get(`/hub/spaces/${space}/statistics`);
        const patch = await call(hub, 'PATCH', `/hub/spaces/${space}`, { body: { searchableProperties: { size: true } } });
        assert.equal(patch.status, 200, patch.text);
        const second = await get(`/hub/spaces/${space}/statistics`, { 'if-none-match': first.headers.get('etag') ?? '' });
        assert.equal(second.status, 200);
        assert.equal((second.body as unknown as Statistics).properties.searchable, 'PARTIAL');
      });
    });

    describe('ETag and caching', () => {
      for (const read of ['/features/BEN', '/features?id=BEN', '/search?p.name=Benin', '/iterate?limit=1', '/count', '/statistics']) {
        test(`${read} answers If-None-Match with 304`, async () => {
          const path = `/hub/spaces/${countries}${read}`;
          const first = await get(path);
          assert.equal(first.status, 200);
          const etag = first.headers.get('etag');
          assert.ok(etag, 'ETag header');
          assert.match(etag, /^(W\/)?".+"$/);
          if (!read.startsWith('/features/')) assert.equal(first.body.etag, etag);
          assert.equal((await get(path)).headers.get('etag'), etag, 'same request, same data, same tag');

          for (const sent of [etag, `W/${etag}`, etag.replace(/^W\//, '').replaceAll('"', ''), `"other", ${etag}`]) {
            const cached = await get(path, { 'if-none-match': sent });
            assert.equal(cached.status, 304, sent);
            assert.equal(cached.text, '');
            assert.equal(cached.headers.get('etag'), etag);
          }
          assert.equal((await get(path, { 'if-none-match': '"other"' })).status, 200);
        });
      }

      test('a single feature\'s ETag hashes its answer (API.md 7): it changes when that feature changes, not when another does', async () => {
        const space = await spaceWith([plain('a'), plain('b')]);
        const first = await get(`/hub/spaces/${space}/features/a`);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features/b`, { body: plain('b', { changed: true }) })).status, 200);
        assert.equal((await get(`/hub/spaces/${space}/features/a`, { 'if-none-match': first.headers.get('etag') ?? '' })).status, 304);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features/a`, { body: plain('a', { changed: true }) })).status, 200);
        const changed = await get(`/hub/spaces/${space}/features/a`, { 'if-none-match': first.headers.get('etag') ?? '' });
        assert.equal(changed.status, 200);
        assert.notEqual(changed.headers.get('etag'), first.headers.get('etag'));
        const selected = await get(`/hub/spaces/${space}/features/a?selection=p.name`);
        assert.notEqual(selected.headers.get('etag'), changed.headers.get('etag'), 'another answer of the same feature has another tag');
      });

      test('a write to a feature an answer holds changes its ETag; the count\'s changes with the count', async () => {
        const space = await spaceWith([plain('a'), plain('b')]);
        const reads = ['/features?id=a', '/search', '/iterate', '/statistics'];
        const before = await Promise.all(reads.map(async (read) => (await get(`/hub/spaces/${space}${read}`)).headers.get('etag')));
        const count = (await get(`/hub/spaces/${space}/count`)).headers.get('etag') ?? '';
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features/a`, { body: plain('a', { changed: true }) });
        assert.equal(put.status, 200, put.text);
        for (const [index, read] of reads.entries()) {
          const response = await get(`/hub/spaces/${space}${read}`, { 'if-none-match': before[index] ?? '' });
          assert.equal(response.status, 200, read);
          assert.notEqual(response.headers.get('etag'), before[index], read);
        }
        assert.equal((await get(`/hub/spaces/${space}/count`, { 'if-none-match': count })).status, 304, 'an update leaves the count as it was');
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features/c`, { body: plain('c') })).status, 200);
        assert.equal((await get(`/hub/spaces/${space}/count`, { 'if-none-match': count })).status, 200);
      });

      test('a space deleted and created again with the same id gets new ETags', async () => {
        const id = `etag-reuse-${Date.now()}`;
        const space = await spaceWith([plain('a', { v: 1 })], { id });
        const first = await get(`/hub/spaces/${space}/features/a`);
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}`)).status, 204);
        await spaceWith([plain('a', { v: 2 })], { id });
        const second = await get(`/hub/spaces/${space}/features/a`, { 'if-none-match': first.headers.get('etag') ?? '' });
        assert.equal(second.status, 200);
        assert.equal(asFeature(second.body).properties.v, 2);
      });

      test('feature reads carry Cache-Control: no-cache', async () => {
        for (const read of ['/features/BEN', '/features?id=BEN', '/search?limit=1', '/iterate?limit=1']) {
          assert.equal((await get(`/hub/spaces/${countries}${read}`)).headers.get('cache-control'), 'no-cache', read);
        }
      });

      test('a space with cacheTTL gets private, max-age', async () => {
        const space = await spaceWith([plain('a')], { cacheTTL: 60 });
        for (const read of ['/features/a', '/features?id=a', '/search', '/iterate']) {
          assert.equal((await get(`/hub/spaces/${space}${read}`)).headers.get('cache-control'), 'private, max-age=60', read);
        }
      });
    });

    describe('compression', () => {
      for (const read of ['/search', '/iterate', `/features?id=${COUNTRY_IDS.join(',')}`, '/features/RUS']) {
        test(`${read.slice(0, 20)} is gzip-compressed when asked for`, async () => {
          const path = `/hub/spaces/${countries}${read}`;
          const zipped = await rawGet(hub, path, { 'accept-encoding': 'gzip' });
          assert.equal(zipped.status, 200);
          assert.equal(zipped.headers['content-encoding'], 'gzip');
          const body = JSON.parse(gunzipSync(zipped.body).toString('utf8')) as FeatureJson & Partial<FeatureCollectionJson>;
          assert.equal(body.features?.length ?? 1, read === '/features/RUS' ? 1 : 180);

          const unzipped = await rawGet(hub, path, {});
          assert.equal(unzipped.headers['content-encoding'], undefined);
          assert.deepEqual(JSON.parse(unzipped.body.toString('utf8')), body);
        });
      }
    });
  });
}
