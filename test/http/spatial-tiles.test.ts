// Black-box tests of what tiles add to a spatial read (API.md 6.2–6.4): vector tiles decoded with @mapbox/vector-tile, viz sampling, tweaks and clustering.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { VectorTile, type VectorTileLayer } from '@mapbox/vector-tile';
import { cellToLatLng, getResolution } from 'h3-js';
import { PbfReader } from 'pbf';
import { call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const idsOf = (response: TestResponse): string[] => ((response.body.features ?? []) as FeatureJson[]).map((item) => item.id);
const point = (id: string, lon: number, lat: number, properties: Record<string, unknown> = {}) =>
  ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [lon, lat] }, properties });

function assertError(response: TestResponse, status: number, code: string): void {
  assert.equal(response.status, status, response.text);
  assert.equal(response.body.type, 'ErrorResponse', response.text);
  assert.equal(response.body.code, code, response.text);
}

/** A binary answer, as fetch leaves it. */
async function binary(hub: HubProcess, path: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string | null; etag: string | null; bytes: Buffer }> {
  const response = await fetch(hub.url + path, { headers: { authorization: `Bearer ${hub.token}`, ...headers } });
  return { status: response.status, type: response.headers.get('content-type'), etag: response.headers.get('etag'), bytes: Buffer.from(await response.arrayBuffer()) };
}

function layerOf(bytes: Buffer, name: string): VectorTileLayer {
  const tile = new VectorTile(new PbfReader(bytes));
  assert.deepEqual(Object.keys(tile.layers), [name]);
  return tile.layers[name];
}

function layerFeatures(layer: VectorTileLayer): Array<{ properties: Record<string, unknown>; geometry: Array<Array<{ x: number; y: number }>> }> {
  return Array.from({ length: layer.length }, (_, i) => {
    const feature = layer.feature(i);
    return { properties: feature.properties, geometry: feature.loadGeometry() };
  });
}

// web/10_550_335 spans longitudes 13.359375..13.7109375 and latitudes 52.4828..52.6964.
const TILE = '10_550_335';
const EAST_EDGE = 13.7109375;
const TILE_WIDTH = 360 / 1024;

/** A grid of `count` points inside the tile. */
function grid(count: number, prefix: string): object[] {
  const side = Math.ceil(Math.sqrt(count));
  return Array.from({ length: count }, (_, i) =>
    point(`${prefix}${i}`, 13.37 + ((i % side) / side) * 0.33, 52.49 + (Math.floor(i / side) / side) * 0.2, { n: i, name: `p${i}` }));
}

for (const backend of BACKENDS) {
  describe(`tile formats, viz, tweaks and clustering (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    let dense: string;

    async function spaceWith(features: object[]): Promise<string> {
      const id = await createSpace(hub);
      for (let i = 0; i < features.length; i += 10_000) {
        const put = await call(hub, 'PUT', `/hub/spaces/${id}/features`, { body: { type: 'FeatureCollection', features: features.slice(i, i + 10_000) } });
        assert.equal(put.status, 200, put.text);
      }
      return id;
    }

    before(async () => {
      hub = await startHub({ backend });
      space = await spaceWith([
        point('inside', 13.5, 52.6, { name: 'Inside', nested: { a: { b: 'deep' } }, list: [1, 2] }),
        point('near', EAST_EDGE + TILE_WIDTH / 256, 52.6, {}),
        point('far', -70, -30, {}),
      ]);
      dense = await spaceWith(grid(40_000, 'g'));
    });
    after(async () => { await hub.stop(); });

    describe('vector tiles', () => {
      test('.mvt is one layer named after the space, extent 4096, with the attributes and the id', async () => {
        const answer = await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt`);
        assert.equal(answer.status, 200);
        assert.equal(answer.type, 'application/vnd.mapbox-vector-tile');
        const layer = layerOf(answer.bytes, space);
        assert.equal(layer.extent, 4096);
        const features = layerFeatures(layer);
        assert.deepEqual(features.map((feature) => feature.properties.id), ['inside']);
        const { properties, geometry } = features[0];
        assert.equal(properties.name, 'Inside');
        assert.equal(JSON.parse(String(properties.nested)).a.b, 'deep');
        assert.equal(typeof properties['@ns:com:here:xyz'], 'string');
        // 13.5 lies 0.140625 of 0.3515625 degrees into the tile: 1638.4 units.
        assert.ok(Math.abs(geometry[0][0].x - 1638.4) <= 1, JSON.stringify(geometry));
      });

      test('whole numbers beyond 64 bits are encoded, not refused with a 500', async () => {
        // MVT integers hold 64 bits: PostGIS writes such numbers as doubles, the JavaScript encoder as their JSON text.
        const big = await spaceWith([point('big', 13.5, 52.6, { up: 1e20, down: -1e20, top: 1.5e308, safe: 9007199254740991 })]);
        for (const suffix of ['mvt', 'mvtf']) {
          const answer = await binary(hub, `/hub/spaces/${big}/tile/web/${TILE}.${suffix}`);
          assert.equal(answer.status, 200, suffix);
          const [feature] = layerFeatures(layerOf(answer.bytes, big));
          const prefix = suffix === 'mvtf' ? 'properties.' : '';
          assert.deepEqual(['up', 'down', 'top', 'safe'].map((name) => Number(feature.properties[prefix + name])), [1e20, -1e20, 1.5e308, 9007199254740991]);
        }
      });

      test('.mvtf flattens the attributes; Accept selects MVT for a plain id', async () => {
        const flat = layerFeatures(layerOf((await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvtf`)).bytes, space));
        assert.equal(flat[0].properties['properties.nested.a.b'], 'deep');
        assert.equal(flat[0].properties['properties.name'], 'Inside');
        const accepted = await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}`, { accept: 'application/vnd.mapbox-vector-tile' });
        assert.equal(accepted.type, 'application/vnd.mapbox-vector-tile');
        assert.equal(layerOf(accepted.bytes, space).length, 1);
      });

      test('margin widens the default buffer of 64 units by 16 units per pixel', async () => {
        const plain = layerFeatures(layerOf((await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt`)).bytes, space));
        assert.ok(!plain.some((feature) => feature.properties.id === 'near'));
        const buffered = layerFeatures(layerOf((await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt?margin=4`)).bytes, space));
        const near = buffered.find((feature) => feature.properties.id === 'near');
        assert.ok(near, 'a point 16 units east of the tile is in a tile with a margin of 4 pixels');
        assert.ok(Math.abs(near.geometry[0][0].x - 4112) <= 1);
      });

      test('an empty tile is a 204; ETags work; levels beyond 24 and here tiles', async () => {
        assert.equal((await binary(hub, `/hub/spaces/${space}/tile/web/10_0_0.mvt`)).status, 204);
        const first = await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt`);
        assert.ok(first.etag);
        assert.equal((await binary(hub, `/hub/spaces/${space}/tile/web/${TILE}.mvt`, { 'if-none-match': first.etag })).status, 304);
        assertError(await call(hub, 'GET', `/hub/spaces/${space}/tile/quadkey/${'0'.repeat(25)}.mvt`), 400, 'vectorTileLevel');
        const here = await binary(hub, `/hub/spaces/${space}/tile/here/1_1_0.mvt`);
        assert.equal(here.status, 200);
        assert.deepEqual(layerFeatures(layerOf(here.bytes, space)).map((feature) => feature.properties.id), ['inside', 'near']);
      });
    });

    describe('mode=viz', () => {
      const viz = (sampling: string, extra = '') => call(hub, 'GET', `/hub/spaces/${dense}/tile/web/${TILE}?mode=viz&vizSampling=${sampling}${extra}`);

      test('samples a stable subset above the thresholds, says partial, and counts off ≥ low ≥ med ≥ high', async () => {
        const counts: Record<string, number> = {};
        for (const sampling of ['off', 'low', 'med', 'high']) {
          const response = await viz(sampling);
          assert.equal(response.status, 200, response.text.slice(0, 200));
          counts[sampling] = idsOf(response).length;
          assert.equal(response.body.partial, sampling === 'med' || sampling === 'high' ? true : undefined, sampling);
        }
        assert.equal(counts.off, 40_000);
        assert.equal(counts.low, 40_000);
        assert.ok(counts.med < 20_000 && counts.med > 10_000, JSON.stringify(counts));
        assert.ok(counts.off >= counts.low && counts.low >= counts.med && counts.med >= counts.high, JSON.stringify(counts));
        assert.deepEqual(idsOf(await viz('med')), idsOf(await viz('med')), 'the same subset every time');
      });

      test('strips properties unless selection or tweaks.defaultselection keeps them', async () => {
        const [stripped] = (await viz('off', '&limit=1')).body.features as FeatureJson[];
        assert.deepEqual(stripped.properties, {});
        const [selected] = (await viz('off', '&limit=1&selection=p.name')).body.features as FeatureJson[];
        assert.deepEqual(selected.properties, { name: 'p0' });
        const [kept] = (await viz('off', '&limit=1&tweaks.defaultselection=true')).body.features as FeatureJson[];
        assert.equal(kept.properties.n, 0);
      });

      test('invalid mode, vizSampling and tweaks are 400s', async () => {
        assertError(await call(hub, 'GET', `/hub/spaces/${dense}/tile/web/${TILE}?mode=fast`), 400, 'invalidParameter');
        assertError(await viz('sometimes'), 400, 'invalidParameter');
        for (const tweak of ['tweaks=foo', 'tweaks=sampling&tweaks.strength=0', 'tweaks=sampling&tweaks.strength=strong',
          'tweaks=ensure&tweaks.samplingthreshold=5', 'tweaks.defaultselection=maybe', 'tweaks=sampling&tweaks.algorithm=a%20b']) {
          assertError(await call(hub, 'GET', `/hub/spaces/${dense}/bbox?west=13&south=52&east=14&north=53&${tweak}`), 400, 'invalidParameter');
        }
      });
    });

    describe('tweaks', () => {
      const bbox = (extra: string) => call(hub, 'GET', `/hub/spaces/${dense}/bbox?west=13&south=52&east=14&north=53&limit=100000${extra}`);

      test('sampling keeps a stable share by strength; ensure samples only above its threshold', async () => {
        const low = await bbox('&tweaks=sampling&tweaks.strength=low');
        assert.equal(low.body.partial, true);
        const share = idsOf(low).length / 40_000;
        assert.ok(share > 0.4 && share < 0.6, String(share));
        const high = idsOf(await bbox('&tweaks=sampling&tweaks.strength=high')).length;
        assert.ok(high < idsOf(low).length / 10, String(high));
        const ensured = await bbox('&tweaks=ensure&tweaks.samplingthreshold=10');
        assert.equal(ensured.body.partial, true);
        assert.ok(idsOf(ensured).length <= 12_000 && idsOf(ensured).length >= 8_000, String(idsOf(ensured).length));
        const whole = await bbox('&tweaks=ensure&tweaks.samplingthreshold=100');
        assert.equal(idsOf(whole).length, 40_000);
        assert.equal(whole.body.partial, undefined);
      });

      test('simplification drops vertices of a detailed line and keeps its ends', async () => {
        const wiggly = Array.from({ length: 500 }, (_, i) => [13 + i * 0.002, 52 + (i % 2) * 0.0001]);
        const id = await createSpace(hub);
        assert.equal((await call(hub, 'PUT', `/hub/spaces/${id}/features/w`, { body: { type: 'Feature', geometry: { type: 'LineString', coordinates: wiggly }, properties: {} } })).status, 200);
        const read = (extra: string) => call(hub, 'GET', `/hub/spaces/${id}/bbox?west=12&south=51&east=15&north=53${extra}`);
        const simplified = ((await read('&tweaks=simplification&tweaks.strength=high')).body.features as FeatureJson[])[0];
        const coordinates = simplified.geometry?.coordinates as number[][];
        assert.ok(coordinates.length < 50, String(coordinates.length));
        assert.deepEqual(coordinates[0], [13, 52]);
        assert.equal((((await read('')).body.features as FeatureJson[])[0].geometry?.coordinates as unknown[]).length, 500);
      });
    });

    describe('clustering', () => {
      test('hexbin on a bbox: H3 cells whose counts add up to the features', async () => {
        const response = await call(hub, 'GET', `/hub/spaces/${dense}/bbox?west=13&south=52&east=14&north=53&clustering=hexbin`);
        assert.equal(response.status, 200, response.text.slice(0, 300));
        const cells = response.body.features as FeatureJson[];
        assert.ok(cells.length > 1);
        let total = 0;
        for (const cell of cells) {
          assert.equal(cell.properties.kind, 'H3');
          const index = String(cell.properties.kind_detail);
          assert.equal(getResolution(index), cell.properties.resolution);
          const [lat, lon] = cellToLatLng(index);
          assert.ok(lon > 13 && lon < 14 && lat > 52 && lat < 53);
          total += (cell.properties.aggregation as { qty: number }).qty;
        }
        assert.equal(total, 40_000);
      });

      test('quadbin on a web tile counts per child cell; clustering MVT; here tiles and bad values are refused', async () => {
        const response = await call(hub, 'GET', `/hub/spaces/${dense}/tile/web/${TILE}?clustering=quadbin&clustering.relativeResolution=1&clustering.countmode=real`);
        assert.equal(response.status, 200, response.text.slice(0, 300));
        const cells = response.body.features as FeatureJson[];
        assert.ok(cells.length >= 1 && cells.length <= 4);
        assert.equal(cells.reduce((sum, cell) => sum + (cell.properties.count as number), 0), 40_000);
        assert.deepEqual((cells[0].properties.zxy as number[])[0], 11);
        const mvt = await binary(hub, `/hub/spaces/${dense}/tile/web/${TILE}.mvt?clustering=quadbin`);
        assert.equal(mvt.status, 200);
        assert.ok(layerOf(mvt.bytes, dense).length >= 1);
        assertError(await call(hub, 'GET', `/hub/spaces/${dense}/tile/here/1_1_0?clustering=hexbin`), 400, 'clusteringOnHereTile');
        assertError(await call(hub, 'GET', `/hub/spaces/${dense}/tile/web/${TILE}?clustering=kmeans`), 400, 'invalidClustering');
        assertError(await call(hub, 'GET', `/hub/spaces/${dense}/tile/web/${TILE}?clustering=hexbin&clustering.nope=1`), 400, 'invalidClustering');
        assertError(await call(hub, 'GET', `/hub/spaces/${dense}/tile/web/${TILE}?clustering=quadbin&p.n=1&p.name=x`), 400, 'invalidClustering');
      });
    });
  });
}
