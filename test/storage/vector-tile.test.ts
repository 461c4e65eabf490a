// Vector tiles (API.md 6.2 MVT output) through the Storage interface, on both engines, decoded with @mapbox/vector-tile.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { VectorTile, type VectorTileLayer } from '@mapbox/vector-tile';
import { PbfReader } from 'pbf';
import { BACKENDS, type Backend } from '../helpers/backends.js';
import type { BBox } from '../../src/geo/bbox.js';
import type { FeatureQuery } from '../../src/core/feature-query.js';
import type { VectorTileRequest } from '../../src/geo/vector-tile-request.js';
import type { SpaceKey } from '../../src/storage/storage.js';
import { openTestStorage, spaceWith, type OpenedStorage, type TestFeature } from './storage-fixture.js';

const SPACE = 'tile-space';
const EXTENT = 4096;

/** web z_x_y bounds by the formulas of API.md 6.2, independent of the code under test. */
function webBounds(z: number, x: number, y: number): BBox {
  const lat = (row: number) => (Math.atan(Math.sinh(Math.PI * (1 - (2 * row) / 2 ** z))) * 180) / Math.PI;
  return [(x / 2 ** z) * 360 - 180, lat(y + 1), ((x + 1) / 2 ** z) * 360 - 180, lat(y)];
}

/** Where a lon/lat lands in web tile z/x/y, in tile units (Web-Mercator, y down). */
function webPixel(z: number, x: number, y: number, lon: number, lat: number): [number, number] {
  const phi = (lat * Math.PI) / 180;
  const u = ((lon + 180) / 360) * 2 ** z - x;
  const v = ((1 - Math.log(Math.tan(phi) + 1 / Math.cos(phi)) / Math.PI) / 2) * 2 ** z - y;
  return [u * EXTENT, v * EXTENT];
}

// web/10_550_335 holds Berlin (and the here tile below): W 13.359375, E 13.7109375.
const [Z, X, Y] = [10, 550, 335];
const WEB = webBounds(Z, X, Y);
const INSIDE: [number, number] = [13.5, (WEB[1] + WEB[3]) / 2];
const NS = { space: SPACE, tags: ['park'], createdAt: 1, updatedAt: 1 };
// here/377894440 (API.md 6.2): [13.359375, 52.5146484375, 13.38134765625, 52.53662109375]
const HERE: BBox = [13.359375, 52.5146484375, 13.38134765625, 52.53662109375];

const FEATURES: TestFeature[] = [
  {
    id: 'inside',
    geometry: { type: 'Point', coordinates: [INSIDE[0], INSIDE[1], 40] },
    properties: { name: 'Inside', n: 7, ok: true, nothing: null, list: [1, 'two'], nested: { a: { b: 'deep' }, c: 2 }, '@ns:com:here:xyz': NS },
  },
  // Leaves the tile to the east: clipped at the edge plus the buffer.
  { id: 'line', geometry: { type: 'LineString', coordinates: [[13.5, INSIDE[1]], [15, INSIDE[1]]] }, properties: { kind: 'road' } },
  // Just east of the tile, inside a buffer of 64 units (1/64 tile) but not of 0.
  { id: 'near', geometry: { type: 'Point', coordinates: [WEB[2] + (WEB[2] - WEB[0]) / 256, INSIDE[1]] }, properties: {} },
  { id: 'far', geometry: { type: 'Point', coordinates: [-70, -30] }, properties: { id: 'not-the-id' } },
  { id: 'nowhere', geometry: null, properties: { name: 'no geometry' } },
  { id: 'here-point', geometry: { type: 'Point', coordinates: [13.37, 52.52] }, properties: { name: 'Here' } },
  {
    id: 'here-square', geometry: { type: 'Polygon', coordinates: [[[13.36, 52.51], [13.40, 52.51], [13.40, 52.53], [13.36, 52.53], [13.36, 52.51]]] },
    properties: { id: 'shadowed' },
  },
];

const ALL: FeatureQuery = { limit: 100_000 };

function request(overrides: Partial<VectorTileRequest> = {}): VectorTileRequest {
  return { layer: SPACE, bounds: WEB, projection: 'mercator', extent: EXTENT, buffer: 64, flatten: false, ...overrides };
}

function decode(bytes: Buffer): VectorTileLayer {
  const tile = new VectorTile(new PbfReader(bytes));
  assert.deepEqual(Object.keys(tile.layers), [SPACE], 'one layer named after the space');
  const layer = tile.layers[SPACE];
  assert.equal(layer.extent, EXTENT);
  return layer;
}

interface DecodedFeature { type: number; properties: Record<string, unknown>; rings: Array<Array<[number, number]>> }

function features(layer: VectorTileLayer): Map<string, DecodedFeature> {
  const result = new Map<string, DecodedFeature>();
  for (let i = 0; i < layer.length; i++) {
    const feature = layer.feature(i);
    const id = String(feature.properties.id ?? feature.properties['properties.id']);
    result.set(id, {
      type: feature.type,
      properties: { ...feature.properties },
      rings: feature.loadGeometry().map((ring) => ring.map((point): [number, number] => [point.x, point.y])),
    });
  }
  return result;
}

function assertNear(actual: [number, number], expected: [number, number], message: string): void {
  assert.ok(Math.abs(actual[0] - expected[0]) <= 1 && Math.abs(actual[1] - expected[1]) <= 1, `${message}: ${actual} vs ${expected}`);
}

/** Every engine's decoded tiles by tile name, compared after all engines ran. */
const results = new Map<string, Map<Backend, Map<string, DecodedFeature>>>();
function remember(name: string, backend: Backend, decoded: Map<string, DecodedFeature>): void {
  if (!results.has(name)) results.set(name, new Map());
  results.get(name)?.set(backend, decoded);
}

for (const backend of BACKENDS) {
  describe(`vector tiles (${backend})`, () => {
    let opened: OpenedStorage;
    let space: SpaceKey;
    before(async () => {
      opened = await openTestStorage(backend);
      space = await spaceWith(opened.storage, SPACE, FEATURES);
    });
    after(async () => { await opened.close(); });

    test('web tile: one layer, the features of the tile with their attributes, points at their pixel', async () => {
      const layer = decode(await opened.storage.features.vectorTile(space, ALL, request()));
      const found = features(layer);
      remember('web', backend, found);
      assert.deepEqual([...found.keys()].sort(), ['here-point', 'here-square', 'inside', 'line', 'near']);
      const inside = found.get('inside');
      assert.deepEqual(inside?.properties, {
        id: 'inside', name: 'Inside', n: 7, ok: true, list: '[1,"two"]', nested: '{"a":{"b":"deep"},"c":2}',
        '@ns:com:here:xyz': JSON.stringify(NS),
      });
      assert.equal(inside?.type, 1);
      assertNear(inside?.rings[0][0] ?? [NaN, NaN], webPixel(Z, X, Y, INSIDE[0], INSIDE[1]), 'point pixel');
    });

    test('clipping keeps the buffer beyond the tile edge', async () => {
      const found = features(decode(await opened.storage.features.vectorTile(space, ALL, request())));
      const line = found.get('line');
      assert.equal(line?.type, 2);
      const xs = line?.rings.flat().map(([x]) => x) ?? [];
      assert.equal(Math.max(...xs), EXTENT + 64, 'the line ends at the buffer edge');
      assertNear(found.get('near')?.rings[0][0] ?? [NaN, NaN], webPixel(Z, X, Y, WEB[2] + (WEB[2] - WEB[0]) / 256, INSIDE[1]), 'point in the buffer');
      const unbuffered = features(decode(await opened.storage.features.vectorTile(space, ALL, request({ buffer: 0 }))));
      assert.deepEqual([...unbuffered.keys()].sort(), ['here-point', 'here-square', 'inside', 'line']);
      assert.equal(Math.max(...(unbuffered.get('line')?.rings.flat().map(([x]) => x) ?? [])), EXTENT);
    });

    test('flattened attributes are properties.<dotted.path>', async () => {
      const found = features(decode(await opened.storage.features.vectorTile(space, ALL, request({ flatten: true }))));
      remember('flat', backend, found);
      assert.deepEqual(found.get('inside')?.properties, {
        'properties.id': 'inside', 'properties.name': 'Inside', 'properties.n': 7, 'properties.ok': true,
        'properties.list': '[1,"two"]', 'properties.nested.a.b': 'deep', 'properties.nested.c': 2,
        'properties.@ns:com:here:xyz.space': SPACE, 'properties.@ns:com:here:xyz.tags': '["park"]',
        'properties.@ns:com:here:xyz.createdAt': 1, 'properties.@ns:com:here:xyz.updatedAt': 1,
      });
    });

    test('here tile: lon/lat mapped linearly onto the tile; the feature id wins over a property "id"', async () => {
      const found = features(decode(await opened.storage.features.vectorTile(space, ALL, request({ bounds: HERE, projection: 'geographic', buffer: 0 }))));
      remember('here', backend, found);
      assert.deepEqual([...found.keys()].sort(), ['here-point', 'here-square']);
      const size = HERE[2] - HERE[0];
      assertNear(found.get('here-point')?.rings[0][0] ?? [NaN, NaN],
        [((13.37 - HERE[0]) / size) * EXTENT, ((HERE[3] - 52.52) / size) * EXTENT], 'here pixel');
      assert.equal(found.get('here-square')?.type, 3);
      assert.equal(found.get('here-square')?.properties.id, 'here-square');
      const ys = found.get('here-square')?.rings.flat().map(([, y]) => y) ?? [];
      assertNear([0, Math.max(...ys)], [0, EXTENT], 'the square is cut at the south edge');
    });

    test('a tile of an area holds its first features in insertion order, whether the limit leaves few of them out or most', async () => {
      // Four features lie in the tile's own bounds: inside, line, here-point, here-square (near lies in the buffer only).
      const inArea = async (limit: number) => [...features(decode(await opened.storage.features.vectorTile(space,
        { spatial: { kind: 'box', box: WEB }, limit }, request({ buffer: 0 })))).keys()];
      assert.deepEqual(await inArea(1), ['inside']);
      assert.deepEqual(await inArea(2), ['inside', 'line']);
      assert.deepEqual(await inArea(3), ['inside', 'line', 'here-point']);
      assert.deepEqual(await inArea(10), ['inside', 'line', 'here-point', 'here-square']);
    });

    test('tiles asked for at the same time are each the tile asked for alone: two spaces, both projections, sparse and dense areas', async () => {
      // On PostgreSQL the unfiltered tiles of one turn are encoded by one statement (tile-batches.ts): each answer must be
      // its own tile, and no tile may carry another space's features.
      const other = await spaceWith(opened.storage, `${SPACE}-other`, [
        { id: 'other-1', geometry: { type: 'Point', coordinates: [13.37, 52.52] }, properties: { owner: 'other' } },
        { id: 'other-2', geometry: { type: 'Point', coordinates: [13.5, 52.6] }, properties: { owner: 'other' } },
      ]);
      const asks = [space, other].flatMap((key) => [1, 2, 10].flatMap((limit) => [
        { key, limit, request: request({ buffer: 0 }) },
        { key, limit, request: request({ flatten: true }) },
        { key, limit, request: request({ bounds: HERE, projection: 'geographic', buffer: 0 }) },
      ]));
      const tile = ({ key, limit, request: asked }: typeof asks[number]) => opened.storage.features.vectorTile(key,
        { spatial: { kind: 'box', box: asked.bounds }, limit }, asked);
      const alone: Buffer[] = [];
      for (const ask of asks) alone.push(await tile(ask));
      const together = await Promise.all(asks.map(tile));
      asks.forEach((ask, i) => {
        assert.deepEqual(together[i], alone[i], `tile ${i} (limit ${ask.limit}, ${ask.request.projection}) asked for with the others`);
        const ids = together[i].length === 0 ? [] : [...features(decode(together[i])).keys()];
        assert.ok(ids.every((id) => id.startsWith('other-') === (ask.key === other)), `tile ${i} holds only its space's features: ${ids}`);
      });
      const otherWeb = asks.findIndex((ask) => ask.key === other && ask.limit === 10 && ask.request.projection === 'mercator' && !ask.request.flatten);
      assert.deepEqual([...features(decode(together[otherWeb])).keys()], ['other-1', 'other-2'], 'the other space\'s web tile');
    });

    test('a tile without features is an empty body', async () => {
      const bytes = await opened.storage.features.vectorTile(space, ALL, request({ bounds: webBounds(Z, X + 5, Y) }));
      assert.equal(bytes.length, 0);
    });
  });
}

test('both engines give the same features and geometries within one tile unit', { skip: BACKENDS.length < 2 }, () => {
  assert.equal(results.size, 3);
  for (const [name, byBackend] of results) {
    const [first, second] = [...byBackend.values()];
    assert.deepEqual([...first.keys()].sort(), [...second.keys()].sort(), name);
    for (const [id, feature] of first) {
      const other = second.get(id);
      assert.deepEqual(other?.properties, feature.properties, `${name} ${id}`);
      assert.equal(other?.type, feature.type);
      const a = feature.rings.flat();
      const b = other?.rings.flat() ?? [];
      assert.equal(b.length, a.length, `${name} ${id} vertex count`);
      // Rings may start at another vertex: each vertex must have a counterpart within one unit.
      for (const point of a) {
        assert.ok(b.some((candidate) => Math.abs(candidate[0] - point[0]) <= 1 && Math.abs(candidate[1] - point[1]) <= 1), `${name} ${id} vertex ${point}`);
      }
    }
  }
});
