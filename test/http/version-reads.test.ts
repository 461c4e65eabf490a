// Black-box tests of reads at a version on every read path (ADR 002, issue 23): area reads, tiles (GeoJSON and MVT), clustering, counts, statistics, OGC, author=, layered spaces and rights.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VectorTile } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { assertError, call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

const NS = '@ns:com:here:xyz';
const point = (id: string, lon: number, lat: number, properties: Record<string, unknown> = {}, tags: string[] = []) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties: { ...properties, [NS]: { tags } } });
const collection = (...features: object[]) => ({ type: 'FeatureCollection', features });
const ids = (response: TestResponse): string[] => {
  assert.equal(response.status, 200, response.text);
  return (response.body.features ?? []).map((feature) => feature.id);
};
const sortedIds = (response: TestResponse): string[] => ids(response).sort();
const virtual = (operation: string, upstreams: string[]) => ({ storage: { id: 'virtualspace', params: { virtualspace: { [operation]: upstreams } } } });

/** web/7_64_63 spans longitudes 0..2.8125 and latitudes 0..2.8; (5, 5) lies outside it. */
const TILE = '7_64_63';

async function binary(hub: HubProcess, path: string): Promise<{ status: number; bytes: Buffer; text: string }> {
  const response = await fetch(hub.url + path, { headers: { authorization: `Bearer ${hub.token}` } });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, bytes, text: bytes.toString('utf8', 0, 300) };
}

/** The ids of an MVT tile's one layer (the hub writes each feature's id as its `id` attribute). */
function tileIds(bytes: Buffer): string[] {
  if (bytes.length === 0) return [];
  const tile = new VectorTile(new PbfReader(bytes));
  const [layer] = Object.values(tile.layers);
  return Array.from({ length: layer.length }, (_, i) => String(layer.feature(i).properties.id)).sort();
}

for (const backend of BACKENDS) {
  describe(`reads at a version (${backend})`, () => {
    let hub: HubProcess;
    /** Version 0: a, b in the tile, c outside; 1: a moves out, n=1; 2: b deleted; 3: d in the tile. */
    let space: string;
    before(async () => {
      hub = await startHub({ backend });
      space = await createSpace(hub, { versionsToKeep: 20 });
      const put = (body: object) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body });
      assert.equal((await put(collection(point('a', 0.5, 0.5, { n: 0 }, ['red']), point('b', 1.5, 1.5, { n: 0 }), point('c', 5, 5, { n: 0 })))).status, 200);
      assert.equal((await put(collection(point('a', 5.5, 5.5, { n: 1 }, ['red'])))).status, 200);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/b`)).status, 204);
      assert.equal((await put(collection(point('d', 0.7, 0.7, { n: 3 })))).status, 200);
    });
    after(async () => { await hub.stop(); });

    const get = (path: string) => call(hub, 'GET', `/hub/spaces/${space}/${path}`);
    const BOX = 'bbox?west=0&south=0&east=2&north=2';

    test('bbox, tile and spatial reads answer the space as it was right after the version', async () => {
      const expected: Record<string, string[]> = { 0: ['a', 'b'], 1: ['b'], 2: [], 3: ['d'], HEAD: ['d'] };
      for (const [version, shown] of Object.entries(expected)) {
        assert.deepEqual(sortedIds(await get(`${BOX}&version=${version}`)), shown, `bbox at ${version}`);
        assert.deepEqual(sortedIds(await get(`tile/web/${TILE}?versionRef=${version}`)), shown, `tile at ${version}`);
        assert.deepEqual(sortedIds(await get(`spatial?lat=1&lon=1&radius=120000&version=${version}`)), shown, `spatial at ${version}`);
        const polygon = { type: 'Polygon', coordinates: [[[0, 0], [2, 0], [2, 2], [0, 2], [0, 0]]] };
        assert.deepEqual(sortedIds(await call(hub, 'POST', `/hub/spaces/${space}/spatial?version=${version}`, { body: polygon })), shown, `POST spatial at ${version}`);
      }
      // Filters apply to the states of the version: a was red and in the box at 0, red elsewhere at 1.
      assert.deepEqual(ids(await get(`${BOX}&version=0&tags=red`)), ['a']);
      assert.deepEqual(ids(await get(`${BOX}&version=1&tags=red`)), []);
      assert.deepEqual(ids(await get(`bbox?west=4&south=4&east=6&north=6&version=1&tags=red&p.n=1`)), ['a']);
      assert.deepEqual(ids(await get(`bbox?west=4&south=4&east=6&north=6&version=0&p.n=0`)), ['c']);
      // Insertion order and limit hold at a version.
      assert.deepEqual(ids(await get('bbox?west=0&south=0&east=6&north=6&version=0')), ['a', 'b', 'c']);
      assert.deepEqual(ids(await get('bbox?west=0&south=0&east=6&north=6&version=0&limit=2')), ['a', 'b']);
      // A limit of 1 makes the area dense for PostgreSQL's probe (probed-area.ts): the planned statement answers.
      assert.deepEqual(ids(await get('bbox?west=0&south=0&east=6&north=6&version=0&limit=1')), ['a']);
      assert.deepEqual(ids(await get('bbox?west=0&south=0&east=6&north=6&version=1&limit=1')), ['a']);
      assert.deepEqual(ids(await get('bbox?west=0&south=0&east=6&north=6&version=2&limit=2')), ['a', 'c']);
      // A feature referenced for a spatial search is read at HEAD of its space.
      assert.deepEqual(sortedIds(await get(`spatial?refSpaceId=${space}&refFeatureId=d&radius=200000&version=0`)), ['a', 'b']);
    });

    test('area reads at a version agree before and after the background pass indexes the history by place', async () => {
      // 300 points moved east at each of three versions: every state is read by place (the area is small), first
      // while the states superseded by the writes have no place entries yet (SQLite enters them in batches that end
      // inside a version), then after the pass. Each answer is what the versions put in the box.
      const moving = await createSpace(hub, { versionsToKeep: 20 });
      const place = (i: number, version: number): [number, number] => [(i % 20) * 0.1 + 0.013 + version * 0.05, Math.floor(i / 20) * 0.1 + 0.017];
      for (let version = 0; version < 3; version++) {
        const features = Array.from({ length: 300 }, (_, i) => point(`m${i}`, ...place(i, version), { version }));
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${moving}/features`, { body: collection(...features) })).status, 200);
      }
      const box = [0.3, 0.2, 0.9, 0.8];
      const expected = (version: number) => Array.from({ length: 300 }, (_, i) => i)
        .filter((i) => { const [lon, lat] = place(i, version); return lon >= box[0] && lon <= box[2] && lat >= box[1] && lat <= box[3]; })
        .map((i) => `m${i}`).sort();
      const read = async () => {
        for (const version of [0, 1, 2]) {
          const response = await call(hub, 'GET', `/hub/spaces/${moving}/bbox?west=${box[0]}&south=${box[1]}&east=${box[2]}&north=${box[3]}&version=${version}&limit=1000`);
          assert.deepEqual(sortedIds(response), expected(version), `version ${version}`);
        }
      };
      await read();
      await new Promise((resolve) => setTimeout(resolve, 2000));
      await read();
    });

    test('an MVT tile at a version holds the features of the GeoJSON tile at that version', async () => {
      for (const version of ['0', '1', '2', '3']) {
        const geojson = sortedIds(await get(`tile/web/${TILE}?version=${version}&clip=true`));
        const tile = await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt?version=${version}`);
        // An empty tile is a 204.
        assert.equal(tile.status, geojson.length === 0 ? 204 : 200, tile.text);
        assert.deepEqual(tileIds(tile.bytes), geojson, `version ${version}`);
      }
      assert.deepEqual(tileIds((await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt?version=0`)).bytes), ['a', 'b']);
    });

    test('clustering counts the features of the version', async () => {
      const total = async (version: string) => {
        const response = await get(`${BOX}&clustering=hexbin&version=${version}`);
        assert.equal(response.status, 200, response.text);
        return (response.body.features ?? []).reduce((sum, cell) => sum + (cell.properties.aggregation as { qty: number }).qty, 0);
      };
      assert.equal(await total('0'), 2);
      assert.equal(await total('2'), 0);
      assert.equal(await total('HEAD'), 1);
    });

    test('count and statistics at a version are counted over the read', async () => {
      const count = async (query: string) => (await get(`count?${query}`)).body.count;
      assert.equal(await count('version=0'), 3);
      assert.equal(await count('version=2'), 2);
      assert.equal(await count('version=3'), 3);
      assert.equal(await count('version=0&tags=red'), 1);
      assert.equal(await count('version=0&p.n=1'), 0);
      assert.equal(await count('version=1&p.n=1'), 1);
      const statistics = await get('statistics?version=0');
      assert.equal(statistics.status, 200, statistics.text);
      assert.equal((statistics.body.count as { value: number }).value, 3);
      assert.deepEqual((statistics.body.bbox as { value: number[] }).value, [0.5, 0.5, 5, 5]);
      assert.deepEqual((statistics.body.tags as { value: Array<{ key: string; count: number }> }).value, [{ key: 'red', count: 1 }]);
      const later = await get('statistics?version=2');
      assert.equal((later.body.count as { value: number }).value, 2);
      assert.deepEqual((later.body.bbox as { value: number[] }).value, [5, 5, 5.5, 5.5]);
    });

    test('OGC items and one item at a version; the next link keeps the version', async () => {
      const page = await call(hub, 'GET', `/ogc/collections/${space}/items?version=0&limit=2`);
      assert.deepEqual(ids(page), ['a', 'b']);
      const next = (page.body.links as Array<{ rel: string; href: string }>).find((link) => link.rel === 'next');
      assert.ok(next && next.href.includes('version=0'), page.text);
      const rest = await fetch(next.href, { headers: { authorization: `Bearer ${hub.token}` } });
      assert.deepEqual((await rest.json() as { features: FeatureJson[] }).features.map((feature) => feature.id), ['c']);
      assert.deepEqual(ids(await call(hub, 'GET', `/ogc/collections/${space}/items?version=0&bbox=0,0,2,2`)), ['a', 'b']);
      const item = await call(hub, 'GET', `/ogc/collections/${space}/items/b?version=1`);
      assert.equal(item.status, 200, item.text);
      assert.equal(item.body.id, 'b');
      assert.equal((await call(hub, 'GET', `/ogc/collections/${space}/items/b?version=2`)).status, 404);
    });

    test('the ETag of a large read at a past version does not change with later writes; HEAD\'s does', async () => {
      // Answers above 4 MiB stream, tagged by their answer key rather than by a hash of the body.
      const scratch = await createSpace(hub, { versionsToKeep: 10 });
      const text = 'x'.repeat(1000);
      const many = Array.from({ length: 5000 }, (_, i) => point(`big${i}`, 1, 1, { text }));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${scratch}/features`, { body: collection(...many) })).status, 200);
      const path = `/hub/spaces/${scratch}/bbox?west=0&south=0&east=2&north=2&limit=100000`;
      const [past, head] = [await call(hub, 'GET', `${path}&version=0`), await call(hub, 'GET', path)];
      assert.ok(past.text.length > 4 * 1024 * 1024, String(past.text.length));
      assert.equal((await call(hub, 'PUT', `/hub/spaces/${scratch}/features`, { body: collection(point('z', 1, 1)) })).status, 200);
      const [pastAgain, headAgain] = [await call(hub, 'GET', `${path}&version=0`), await call(hub, 'GET', path)];
      assert.equal(ids(pastAgain).length, 5000);
      assert.equal(ids(headAgain).length, 5001);
      assert.equal(pastAgain.headers.get('etag'), past.headers.get('etag'));
      assert.notEqual(headAgain.headers.get('etag'), head.headers.get('etag'));
      const revalidated = await call(hub, 'GET', `${path}&version=0`, { headers: { 'if-none-match': past.headers.get('etag') ?? '' } });
      assert.equal(revalidated.status, 304);
    });

    test('author= keeps the features last written by one of the authors, at HEAD and at a version', async () => {
      const shared = await createSpace(hub, { versionsToKeep: 10 });
      const owner = (await call(hub, 'GET', `/hub/spaces/${shared}`)).body.owner as string;
      const other = await issueToken(hub, { aid: `version-reads-writer-${backend}`, urm: ownerRights(owner) });
      const as = { authorization: `Bearer ${other.token}` };
      const features = `/hub/spaces/${shared}/features`;
      assert.equal((await call(hub, 'PUT', features, { body: collection(point('a', 1, 1), point('b', 1, 1)) })).status, 200);
      assert.equal((await call(hub, 'PUT', features, { body: collection(point('b', 1.1, 1), point('c', 1, 1)), headers: as })).status, 200);
      const read = (path: string) => call(hub, 'GET', `/hub/spaces/${shared}/${path}`);
      const me = encodeURIComponent(owner);
      const them = encodeURIComponent(other.aid);
      assert.deepEqual(ids(await read(`search?author=${me}`)), ['a']);
      assert.deepEqual(ids(await read(`search?author=${them}`)), ['b', 'c']);
      assert.deepEqual(ids(await read(`iterate?author=${me},${them}`)), ['a', 'b', 'c']);
      assert.deepEqual(ids(await read(`bbox?west=0&south=0&east=2&north=2&author=${them}`)), ['b', 'c']);
      assert.deepEqual(ids(await read(`features?id=a,b,c&author=${them}`)), ['b', 'c']);
      assert.equal((await read(`count?author=${them}`)).body.count, 2);
      // At version 0 the admin had written both.
      assert.deepEqual(ids(await read(`search?author=${me}&version=0`)), ['a', 'b']);
      assert.deepEqual(ids(await read(`bbox?west=0&south=0&east=2&north=2&author=${them}&version=0`)), []);
      assert.equal((await read(`count?author=${me}&version=0`)).body.count, 2);
      assert.deepEqual(ids(await read('search?author=nobody')), []);
      assertError(await read('search?author='), 400, 'invalidParameter', 'author');
    });

    test('a caller who may not read the space gets 403 and no feature on every path at a version', async () => {
      const { token } = await issueToken(hub, { aid: `version-reads-outsider-${backend}`, urm: ownerRights(`version-reads-outsider-${backend}`) });
      const headers = { authorization: `Bearer ${token}` };
      const paths = [`${BOX}`, `tile/web/${TILE}`, `tile/web/${TILE}.mvt`, 'spatial?lat=1&lon=1&radius=1000', `${BOX}&clustering=hexbin`, 'count', 'statistics'];
      for (const version of ['0', '99']) {
        for (const path of paths) {
          const response = await call(hub, 'GET', `/hub/spaces/${space}/${path}${path.includes('?') ? '&' : '?'}version=${version}`, { headers });
          assertError(response, 403, 'insufficientRights');
          assert.ok(!response.text.includes('"n"') && !response.text.includes('HEAD'), `${path}: ${response.text}`);
        }
        const post = await call(hub, 'POST', `/hub/spaces/${space}/spatial?version=${version}`, { headers, body: { type: 'Point', coordinates: [1, 1] } });
        assertError(post, 403, 'insufficientRights');
        for (const path of ['items', 'items/a']) {
          const response = await call(hub, 'GET', `/ogc/collections/${space}/${path}?version=${version}`, { headers });
          assert.equal(response.status, 403, response.text);
          assert.ok(!response.text.includes('"n"') && !response.text.includes('HEAD'), `${path}: ${response.text}`);
        }
      }
    });
  });

  describe(`layered spaces at a version (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const put = (space: string, body: object) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body });
    const get = (space: string, path: string) => call(hub, 'GET', `/hub/spaces/${space}/${path}`);
    const version = (response: TestResponse): unknown => ((response.body.features ?? [response.body as unknown as FeatureJson])[0].properties[NS] as unknown as Record<string, unknown>).version;

    test('a composite space at a version: its own layer at it, the space it extends at HEAD', async () => {
      const base = await createSpace(hub, { versionsToKeep: 10 });
      assert.equal((await put(base, collection(point('b1', 1, 1, { n: 0 }), point('b2', 1, 1, { n: 0 })))).status, 200);
      const composite = await createSpace(hub, { versionsToKeep: 10, extends: { spaceId: base } });
      // Composite version 0: b1 overridden; 1: b2 deleted (hidden); 2: c1 added.
      assert.equal(version(await put(composite, collection(point('b1', 1, 1, { n: 1 })))), 0);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${composite}/features/b2`)).status, 204);
      assert.equal(version(await put(composite, collection(point('c1', 1, 1, { n: 2 })))), 2);
      // The base keeps its own numbering: the writes through the composite changed only the composite's layer.
      assertError(await get(base, 'search?version=1'), 400, 'versionNotYet', 'HEAD is 0');

      const at = (path: string, v: string) => get(composite, `${path}${path.includes('?') ? '&' : '?'}version=${v}`);
      assert.deepEqual(ids(await at('iterate', '0')), ['b2', 'b1']);
      assert.deepEqual(ids(await at('iterate', '1')), ['b1']);
      assert.deepEqual(ids(await at('iterate', '2')), ['b1', 'c1']);
      assert.deepEqual(ids(await at('bbox?west=0&south=0&east=2&north=2', '0')), ['b2', 'b1']);
      assert.equal((await at('count', '0')).body.count, 2);
      assert.equal((await at('count', '2')).body.count, 2);
      assert.equal(((await at('features/b1', '0')).body as unknown as FeatureJson).properties.n, 1);
      assert.equal((await at('features/b2', '0')).status, 200);
      assert.equal((await at('features/b2', '1')).status, 404);
      assert.deepEqual(ids(await at('search?p.n=0', '0')), ['b2']);
      assert.deepEqual(sortedIds(await at('tile/web/7_64_63', '0')), ['b1', 'b2']);
      assert.deepEqual(tileIds((await binary(hub, `/hub/spaces/${composite}/tile/web/7_64_63.mvt?version=1`)).bytes), ['b1']);
      // The base below is read at HEAD: a feature added to it since shows at every version of the composite.
      assert.equal((await put(base, collection(point('b3', 1, 1)))).status, 200);
      assert.deepEqual(ids(await at('iterate', '0')), ['b2', 'b3', 'b1']);
      // Iterate at a version pages across the layers and keeps the version.
      const first = await at('iterate?limit=2', '1');
      assert.deepEqual(ids(first), ['b3', 'b1']);
      await put(composite, collection(point('c2', 1, 1)));
      assert.deepEqual(ids(await get(composite, `iterate?limit=2&handle=${first.body.handle as string}`)), []);
      assertError(await at('iterate', '9'), 400, 'versionNotYet', 'HEAD is 3');
    });

    test('a write through a virtual space versions each layer it changes; the layers read back at their versions; the virtual space has none', async () => {
      const a = await createSpace(hub, { versionsToKeep: 10 });
      const b = await createSpace(hub, { versionsToKeep: 10 });
      assert.equal((await put(a, collection(point('a1', 1, 1, { n: 0 })))).status, 200);
      const group = await createSpace(hub, virtual('group', [a, b]));
      // One write: a1 is updated where it is (a, its version 1), new goes to the last upstream (b, its version 0).
      const written = await put(group, collection(point('a1', 1, 1, { n: 1 }), point('new', 1, 1, { n: 1 })));
      assert.equal(written.status, 200, written.text);
      const versions = Object.fromEntries((written.body.features ?? []).map((feature) => [feature.id, (feature.properties[NS] as unknown as Record<string, unknown>).version]));
      assert.deepEqual(versions, { a1: 1, new: 0 }, written.text);
      assert.equal(((await get(a, 'features/a1?version=0')).body as unknown as FeatureJson).properties.n, 0);
      assert.equal(((await get(a, 'features/a1?version=1')).body as unknown as FeatureJson).properties.n, 1);
      assert.deepEqual(ids(await get(b, 'bbox?west=0&south=0&east=2&north=2&version=0')), ['new']);
      assert.deepEqual(ids(await get(a, 'bbox?west=0&south=0&east=2&north=2&version=0')), ['a1']);
      for (const path of ['iterate?version=0', 'bbox?west=0&south=0&east=2&north=2&version=0', 'count?version=0', 'features/a1?version=0', 'features/a1?version=*']) {
        assertError(await get(group, path), 400, 'versionOfLayers');
      }
      assert.deepEqual(ids(await get(group, 'iterate?version=HEAD')), ['a1', 'new']);
    });
  });
}
