// Black-box tests of bbox, tile and spatial reads (API.md 6.1, 6.2, 6.5, 6.6, 7): hand-checked geometry cases, parameters, clip, errors and caching.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { latLngToCell } from 'h3-js';
import { type Body, call, createSpace, createSpaceWith, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

type Coordinates = unknown;

const feature = (id: string, type: string, coordinates: Coordinates, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type, coordinates }, properties });
const point = (id: string, lon: number, lat: number, properties: Record<string, unknown> = {}) => feature(id, 'Point', [lon, lat], properties);
const box = (west: number, south: number, east: number, north: number) =>
  [[[west, south], [east, south], [east, north], [west, north], [west, south]]];

const idsOf = (response: TestResponse): string[] => ((response.body.features ?? []) as FeatureJson[]).map((item) => item.id);
const sorted = (ids: string[]) => [...ids].sort();

function assertError(response: TestResponse, status: number, code: string, message?: string | RegExp): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.type, 'ErrorResponse', response.text);
  assert.equal(response.body.code, code, response.text);
  if (typeof message === 'string') assert.equal(response.body.errorMessage, message);
  else if (message) assert.match(String(response.body.errorMessage), message);
}

/** The features of the hand-checked cases, each named after what it tests. */
const CASES = [
  point('edge-point', 10, 10),
  feature('edge-polygon', 'Polygon', box(5, 5, 10, 8)),
  // A triangle whose bounding box covers [20,20,30,30] while its shape stays in the south-east half.
  feature('triangle', 'Polygon', [[[20, 20], [30, 20], [30, 30], [20, 20]]]),
  feature('holed', 'Polygon', [box(40, 40, 50, 50)[0], box(43, 43, 47, 47)[0].reverse()]),
  feature('antimeridian', 'MultiPolygon', [box(179, -20, 180, -10), box(-180, -20, -179, -10)]),
  // A U open to the north: a box across both arms cuts it in two.
  feature('u-shape', 'Polygon', [[[60, 0], [66, 0], [66, 6], [64, 6], [64, 2], [62, 2], [62, 6], [60, 6], [60, 0]]]),
  point('tile-border', 11.25, 50),
  point('north-pole-a', 0, 89.99),
  point('north-pole-b', 180, 89.99),
  point('berlin', 13.37, 52.52),
  point('near-antimeridian', 179.9, 10),
  point('south-of-equator', -10, -10),
  point('lon-30', 30, 10),
];

for (const backend of BACKENDS) {
  describe(`spatial reads (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    const get = (path: string, headers: Record<string, string> = {}) => call(hub, 'GET', `/hub/spaces/${space}${path}`, { headers });

    const spaceWith = (features: object[], extra: Record<string, unknown> = {}) => createSpaceWith(hub, features, extra);

    before(async () => {
      hub = await startHub({ backend });
      space = await spaceWith(CASES);
    });
    after(async () => { await hub.stop(); });

    describe('hand-checked geometry cases', () => {
      test('a feature touching the box edge is found', async () => {
        const response = await get('/bbox?west=10&south=8&east=12&north=12');
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(sorted(idsOf(response)), ['edge-point', 'edge-polygon']);
      });

      test('a polygon whose bbox overlaps the query while its shape does not is not found', async () => {
        assert.deepEqual(idsOf(await get('/bbox?west=20.5&south=28&east=22&north=29.5')), []);
        assert.deepEqual(idsOf(await get('/bbox?west=28&south=21&east=29&north=22')), ['triangle']);
      });

      test('a query inside a polygon\'s hole finds nothing; one reaching the ring finds it', async () => {
        assert.deepEqual(idsOf(await get('/bbox?west=44&south=44&east=46&north=46')), []);
        assert.deepEqual(idsOf(await get('/spatial?lat=45&lon=45')), []);
        assert.deepEqual(idsOf(await get('/bbox?west=44&south=44&east=48&north=46')), ['holed']);
      });

      test('a multipolygon on both sides of the antimeridian is found from either side and not in between', async () => {
        assert.deepEqual(idsOf(await get('/bbox?west=179.5&south=-15&east=180&north=-14')), ['antimeridian']);
        assert.deepEqual(idsOf(await get('/bbox?west=-180&south=-15&east=-179.5&north=-14')), ['antimeridian']);
        assert.deepEqual(idsOf(await get('/bbox?west=-100&south=-15&east=100&north=-14')), []);
      });

      test('a point exactly on a tile boundary is in both tiles', async () => {
        // web/5_16_10 ends and web/5_17_10 starts at longitude 11.25.
        assert.ok(idsOf(await get('/tile/web/5_16_10')).includes('tile-border'));
        assert.ok(idsOf(await get('/tile/web/5_17_10')).includes('tile-border'));
        assert.ok(!idsOf(await get('/tile/web/5_18_10')).includes('tile-border'));
      });

      test('a radius search near the pole reaches across it', async () => {
        // The two points are 0.02 degrees of latitude apart over the pole: about 2.2 km.
        assert.deepEqual(sorted(idsOf(await get('/spatial?lat=89.99&lon=0&radius=5000'))), ['north-pole-a', 'north-pole-b']);
        assert.deepEqual(idsOf(await get('/spatial?lat=89.99&lon=0&radius=1000')), ['north-pole-a']);
      });

      test('here tiles at levels 1 and 14', async () => {
        const level1 = idsOf(await get('/tile/here/1_0_0'));
        assert.ok(level1.includes('south-of-equator') && !level1.includes('lon-30'), level1.join());
        assert.deepEqual(idsOf(await get('/tile/here/14_8800_6486')), ['berlin']);
        assert.deepEqual(idsOf(await get('/tile/here/12201203120220')), ['berlin']);
      });

      test('margin is clamped at the world edge and never wraps', async () => {
        const plain = idsOf(await get('/tile/web/1_0_0'));
        assert.ok(!plain.includes('lon-30') && !plain.includes('south-of-equator'));
        // 64 px is a quarter tile: 45 degrees east, and south to about -41 degrees.
        const enlarged = idsOf(await get('/tile/web/1_0_0?margin=64'));
        assert.ok(enlarged.includes('lon-30') && enlarged.includes('south-of-equator'), enlarged.join());
        assert.ok(!enlarged.includes('near-antimeridian'), 'the margin does not wrap around the antimeridian');
      });

      test('a clipped polygon that becomes a multipolygon', async () => {
        const query = '/bbox?west=59&south=3&east=67&north=5';
        const clipped = (await get(`${query}&clip=true`)).body.features as FeatureJson[];
        assert.deepEqual(clipped.map((item) => item.id), ['u-shape']);
        assert.equal(clipped[0].geometry?.type, 'MultiPolygon');
        const whole = (await get(query)).body.features as FeatureJson[];
        assert.equal(whole[0].geometry?.type, 'Polygon');
      });
    });

    describe('GET /bbox', () => {
      test('returns features in insertion order, honours limit, tags and property filters', async () => {
        const id = await spaceWith([
          point('a', 1, 1, { kind: 'x', '@ns:com:here:xyz': { tags: ['t'] } }),
          point('b', 2, 2, { kind: 'y' }),
          point('c', 3, 3, { kind: 'x' }),
          point('outside', 50, 50, { kind: 'x' }),
        ]);
        const read = (query: string) => call(hub, 'GET', `/hub/spaces/${id}/bbox?west=0&south=0&east=10&north=10${query}`);
        assert.deepEqual(idsOf(await read('')), ['a', 'b', 'c']);
        assert.deepEqual(idsOf(await read('&limit=2')), ['a', 'b']);
        assert.deepEqual(idsOf(await read('&tags=t')), ['a']);
        assert.deepEqual(idsOf(await read('&p.kind=x')), ['a', 'c']);
        const response = await read('&selection=p.kind&force2D=true');
        const first = (response.body.features as FeatureJson[])[0];
        assert.deepEqual(first.properties, { kind: 'x' });
        assert.deepEqual(first.geometry?.coordinates, [1, 1]);
      });

      test('a box without width or height finds what crosses its line or point', async () => {
        assert.deepEqual(idsOf(await get('/bbox?west=62.5&south=-1&east=62.5&north=1')), ['u-shape']);
        assert.deepEqual(sorted(idsOf(await get('/bbox?west=7&south=8&east=10&north=8'))), ['edge-polygon']);
        assert.deepEqual(idsOf(await get('/bbox?west=10&south=10&east=10&north=10')), ['edge-point']);
      });

      test('swapped corners select the same box', async () => {
        const ordered = sorted(idsOf(await get('/bbox?west=5&south=5&east=12&north=12')));
        assert.deepEqual(sorted(idsOf(await get('/bbox?west=12&south=12&east=5&north=5'))), ordered);
        assert.ok(ordered.length > 0);
      });

      for (const [query, name] of [['south=0&east=1&north=1', 'west'], ['west=0&west=1&south=0&east=1&north=1', 'west'], ['west=0&south=0&east=1', 'north']]) {
        test(`${name} missing or repeated (${query}) is a 400`, async () => {
          assertError(await get(`/bbox?${query}`), 400, 'notExactlyOneValue', `Invalid '${name}' query parameter, expected exactly one value.`);
        });
      }

      test('coordinates out of range or not numbers are 400s with the documented message', async () => {
        assertError(await get('/bbox?west=181&south=0&east=1&north=1'), 400, 'invalidCoordinate',
          "Invalid 'west' query parameter, must be a WGS'84 longitude in decimal degree (so a value between -180 and +180).");
        assertError(await get('/bbox?west=0&south=-91&east=1&north=1'), 400, 'invalidCoordinate',
          "Invalid 'south' query parameter, must be a WGS'84 latitude in decimal degree (so a value between -90 and +90).");
        assertError(await get('/bbox?west=abc&south=0&east=1&north=1'), 400, 'invalidCoordinate');
        assertError(await get('/bbox?west=0x10&south=0&east=1&north=1'), 400, 'invalidCoordinate');
      });

      test('an unknown space is a 404', async () => {
        assertError(await call(hub, 'GET', '/hub/spaces/no-such-space/bbox?west=0&south=0&east=1&north=1'), 404, 'spaceOfFeaturesNotFound');
      });

      test('ETag and 304, and a write changes the tag; no-cache unless the space sets cacheTTL', async () => {
        const id = await spaceWith([point('a', 1, 1)]);
        const path = `/hub/spaces/${id}/bbox?west=0&south=0&east=10&north=10`;
        const first = await call(hub, 'GET', path);
        const etag = first.headers.get('etag') ?? '';
        assert.match(etag, /^"[0-9a-f]+"$/);
        assert.equal(first.headers.get('cache-control'), 'no-cache');
        assert.equal((await call(hub, 'GET', path, { headers: { 'if-none-match': etag } })).status, 304);
        assert.equal((await call(hub, 'GET', `${path}&skipCache=true`)).status, 200);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/b`, { body: point('b', 2, 2) })).status, 200);
        const after = await call(hub, 'GET', path, { headers: { 'if-none-match': etag } });
        assert.equal(after.status, 200);
        assert.deepEqual(idsOf(after), ['a', 'b']);
        const cached = await spaceWith([point('a', 1, 1)], { cacheTTL: 60 });
        const response = await call(hub, 'GET', `/hub/spaces/${cached}/bbox?west=0&south=0&east=10&north=10`);
        assert.equal(response.headers.get('cache-control'), 'private, max-age=60');
      });
    });

    describe('GET /tile', () => {
      test('the four schemes name the same tile', async () => {
        const web = sorted(idsOf(await get('/tile/web/5_17_10')));
        assert.ok(web.includes('berlin'));
        assert.deepEqual(sorted(idsOf(await get('/tile/tms/5_17_21'))), web);
        assert.deepEqual(sorted(idsOf(await get('/tile/quadkey/12021'))), web);
        assert.deepEqual(sorted(idsOf(await get('/tile/web/5_17_10.geojson'))), web);
      });

      test('a write is visible to the next tile read', async () => {
        const id = await spaceWith([point('a', 13.1, 52.1)]);
        const tile = `/hub/spaces/${id}/tile/quadkey/1202?margin=20&clip=false`;
        assert.deepEqual(idsOf(await call(hub, 'GET', tile)), ['a']);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/b`, { body: point('b', 13.2, 52.2) })).status, 200);
        assert.deepEqual(idsOf(await call(hub, 'GET', tile)), ['a', 'b']);
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${id}/features/a`)).status, 204);
        assert.deepEqual(idsOf(await call(hub, 'GET', tile)), ['b']);
      });

      test('clip=true cuts geometries to the tile; without it they come whole', async () => {
        // web/3_4_3 spans longitudes 0..45 and latitudes 0..40.98: it holds the south-west corner of "holed".
        const positions = async (query: string) => {
          const response = await get(`/tile/web/3_4_3${query}`);
          const holed = (response.body.features as FeatureJson[]).find((item) => item.id === 'holed');
          assert.ok(holed, response.text);
          return (JSON.stringify(holed.geometry?.coordinates).match(/-?[\d.]+,-?[\d.]+/g) ?? []).map((pair) => pair.split(',').map(Number));
        };
        const clipped = await positions('?clip=true');
        assert.ok(clipped.length > 0 && clipped.every(([lon, lat]) => lon >= 40 && lon <= 45 && lat >= 40 && lat <= 40.98), JSON.stringify(clipped));
        assert.ok((await positions('')).some(([lon]) => lon === 50));
      });

      test('invalid types, ids and margins are 400s', async () => {
        assertError(await get('/tile/foo/1_0_0'), 400, 'invalidTileType');
        assertError(await get('/tile/web/1_2_0'), 400, 'invalidTileId', /^Invalid argument tileId\./);
        assertError(await get('/tile/quadkey/0124'), 400, 'invalidTileId', /^Invalid argument tileId\./);
        assertError(await get('/tile/here/1_0_1'), 400, 'invalidTileId', /^Invalid argument tileId\./);
        assertError(await get('/tile/web/1_0_0?margin=-1'), 400, 'invalidParameter');
        assertError(await get('/tile/web/1_0_0?limit=0'), 400, 'limitOutOfRange');
      });
    });

    describe('GET and POST /spatial', () => {
      test('lat/lon with a radius, a reference feature and an H3 cell', async () => {
        // The polygon's nearest corner (10, 8) is about 221 km from (10, 10).
        assert.deepEqual(idsOf(await get('/spatial?lat=10&lon=10&radius=1000')), ['edge-point']);
        assert.deepEqual(sorted(idsOf(await get('/spatial?lat=10&lon=10&radius=225000'))), ['edge-point', 'edge-polygon']);
        assert.deepEqual(idsOf(await get('/spatial?lat=45&lon=41')), ['holed']);
        assert.deepEqual(idsOf(await get(`/spatial?refSpaceId=${space}&refFeatureId=edge-polygon`)), ['edge-polygon']);
        assert.deepEqual(sorted(idsOf(await get(`/spatial?refSpaceId=${space}&refFeatureId=edge-point&radius=225000`))), ['edge-point', 'edge-polygon']);
        assert.deepEqual(idsOf(await get(`/spatial?h3Index=${latLngToCell(52.52, 13.37, 5)}`)), ['berlin']);
      });

      test('POST takes a bare geometry; a negative radius shrinks a polygon', async () => {
        const post = (body: unknown, query = '') => call(hub, 'POST', `/hub/spaces/${space}/spatial${query}`, { body });
        assert.deepEqual(idsOf(await post({ type: 'Polygon', coordinates: box(9, 9, 11, 11) })), ['edge-point']);
        // Shrunk by 50 km the box no longer reaches the polygon's part north of 7.9.
        const reaching = { type: 'Polygon', coordinates: box(9, 7.9, 11, 11) };
        assert.deepEqual(idsOf(await post(reaching)), ['edge-point', 'edge-polygon']);
        assert.deepEqual(idsOf(await post(reaching, '?radius=-50000')), ['edge-point']);
        assert.deepEqual(idsOf(await post({ type: 'Point', coordinates: [10, 10] }, '?radius=-10')), []);
        const clipped = await post({ type: 'Polygon', coordinates: box(9, 7, 11, 11) }, '?clip=true');
        const polygon = (clipped.body.features as FeatureJson[]).find((item) => item.id === 'edge-polygon');
        assert.equal(polygon?.geometry?.type, 'Polygon');
        const longitudes = JSON.stringify(polygon?.geometry?.coordinates).match(/\[-?[\d.]+/g)?.map((text) => Number(text.slice(1))) ?? [];
        assert.ok(longitudes.length > 0 && longitudes.every((lon) => lon >= 9 && lon <= 10), longitudes.join());
      });

      test('missing, mixed and unknown sources are the documented errors', async () => {
        assertError(await get('/spatial'), 400, 'spatialSourceInvalid',
          "Invalid arguments! Define 'lat' and 'lon' OR reference a 'refFeatureId' in a 'refSpaceId'!");
        assertError(await get('/spatial?lat=1'), 400, 'spatialCoordinateMissing', "'lon' Param is missing!");
        assertError(await get('/spatial?lon=1'), 400, 'spatialCoordinateMissing', "'lat' Param is missing!");
        assertError(await get(`/spatial?lat=1&lon=1&refSpaceId=${space}&refFeatureId=berlin`), 400, 'spatialSourceInvalid');
        assertError(await get(`/spatial?refSpaceId=${space}`), 400, 'spatialSourceInvalid');
        assertError(await get('/spatial?refSpaceId=nope&refFeatureId=x'), 400, 'refSpaceNotFound', "The resource ID 'nope' does not exist!");
        assertError(await get(`/spatial?refSpaceId=${space}&refFeatureId=nope`), 404, 'refFeatureNotFound', "The 'refFeatureId' : 'nope' does not exist.");
        assertError(await get('/spatial?h3Index=zzz'), 400, 'invalidParameter');
        assertError(await get('/spatial?lat=91&lon=0'), 400, 'invalidCoordinate');
        assertError(await get('/spatial?lat=1&lon=1&radius=1.5'), 400, 'invalidParameter');
      });

      test('POST bodies that are no valid geometry are 400s', async () => {
        const post = (body: unknown) => call(hub, 'POST', `/hub/spaces/${space}/spatial`, { body });
        assertError(await post({ type: 'Feature', geometry: null, properties: {} }), 400, 'notAGeometry',
          "The provided content is of type 'Feature'. Expected is a GeoJson-Geometry [Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon].");
        assertError(await post([1, 2]), 400, 'notAGeometry');
        assertError(await post({ type: 'Polygon', coordinates: [[[0, 0], [1, 1]]] }), 400, 'invalidQueryGeometry', /^Geometry isn't valid!/);
        const many = Array.from({ length: 12_001 }, (_, i) => [i / 1000, 0]);
        assertError(await post({ type: 'LineString', coordinates: many }), 400, 'tooManyCoordinates');
        const body: Body = (await call(hub, 'POST', `/hub/spaces/${space}/spatial`, { rawBody: '{"type":' })).body;
        assert.equal(body.type, 'ErrorResponse');
      });

      test('clip=true with a radius reaching across the antimeridian or a pole is refused; without clip it works', async () => {
        assertError(await get('/spatial?lat=0&lon=0&radius=20100000&clip=true'), 400, 'clipAcrossAntimeridian');
        assert.equal((await get('/spatial?lat=0&lon=0&radius=20100000')).status, 200);
      });

      test('a stored self-crossing polygon is still clipped (repaired) instead of failing the read', async () => {
        const id = await spaceWith([feature('bowtie', 'Polygon', [[[0, 0], [2, 2], [0, 2], [2, 0], [0, 0]]])]);
        const response = await call(hub, 'GET', `/hub/spaces/${id}/bbox?west=0.5&south=0.5&east=3&north=3&clip=true`);
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(idsOf(response), ['bowtie']);
      });

      test('a buffer across the antimeridian is refused for a non-point geometry', async () => {
        const response = await call(hub, 'POST', `/hub/spaces/${space}/spatial?radius=100000`,
          { body: { type: 'LineString', coordinates: [[179.5, 0], [179.9, 1]] } });
        assertError(response, 400, 'bufferCrossesAntimeridian');
      });
    });
  });
}

// The setting changes how the tile route reads ids, whatever the engine: one engine is enough.
describe('HUB_HERE_TILE_ENCODING=decimal', () => {
  let hub: HubProcess;
  let space: string;
  before(async () => {
    hub = await startHub({ backend: BACKENDS[0], env: { HUB_HERE_TILE_ENCODING: 'decimal' } });
    space = await createSpace(hub);
    const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [point('berlin', 13.37, 52.52)] } });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => { await hub.stop(); });

  test('reads here ids as decimal numbers; L_x_y still works', async () => {
    const read = (id: string) => call(hub, 'GET', `/hub/spaces/${space}/tile/here/${id}`);
    assert.deepEqual(idsOf(await read('377894440')), ['berlin']);
    assert.deepEqual(idsOf(await read('14_8800_6486')), ['berlin']);
    // The base-4 form of the same tile, read as a decimal number, is another tile.
    const other = await read('12201203120220');
    assert.ok(other.status === 400 || idsOf(other).length === 0, other.text);
    assertError(await read('12a'), 400, 'invalidTileId', /^Invalid argument tileId\./);
  });
});
