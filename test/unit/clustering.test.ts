// Unit tests for clustering: option parsing and errors, hexbin (H3) cells and statistics, quadbin counts (API.md 6.4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HubError } from '../../src/core/errors.js';
import type { BBox } from '../../src/geo/bbox.js';
import { parseTileId } from '../../src/core/tile-ids.js';
import { tileBounds, quadkeyOf, mercatorBounds } from '../../src/geo/tile-schemes.js';
import { checkClusterableTile, parseClustering, type ClusteringRequest, type HexbinRequest } from '../../src/hub/clustering/clustering-options.js';
import { cluster, type ClusterArea } from '../../src/hub/clustering/cluster.js';
import { hexbinResolution, hexbinZoom } from '../../src/hub/clustering/hexbin.js';
import { quadbinBaseLevel } from '../../src/hub/clustering/quadbin.js';
import { MEDIAN_SAMPLE_SIZE, ValueStats } from '../../src/hub/clustering/value-stats.js';

interface CellFeature {
  type: string;
  id: string;
  geometry: { type: string; coordinates: number[] | number[][][] };
  properties: Record<string, unknown>;
}

function request(clustering: string, options: Record<string, string> = {}): ClusteringRequest {
  const parsed = parseClustering(clustering, new Map(Object.entries(options)));
  assert.ok(parsed !== undefined);
  return parsed;
}

function assertRefused(clustering: string, options: Record<string, string>, name: string): void {
  assert.throws(() => parseClustering(clustering, new Map(Object.entries(options))), (error: unknown) => {
    assert.ok(error instanceof HubError);
    assert.equal(error.code, 'invalidClustering');
    assert.equal(error.status, 400);
    assert.ok(error.message.startsWith(`Invalid clustering. ${name} value. `), error.message);
    return true;
  });
}

let nextId = 0;
function point(longitude: number, latitude: number, properties: Record<string, unknown> = {}, id = `f${nextId++}`): string {
  return JSON.stringify({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [longitude, latitude, 0] }, properties });
}

function feature(geometry: object, id = `f${nextId++}`): string {
  return JSON.stringify({ type: 'Feature', id, geometry, properties: {} });
}

/** Rows in pages of `pageSize`, as storage hands them over. */
async function* pages(jsons: string[], pageSize = 2): AsyncIterable<Array<{ seq: number; json: string }>> {
  for (let start = 0; start < jsons.length; start += pageSize) {
    yield jsons.slice(start, start + pageSize).map((json, index) => ({ seq: start + index + 1, json }));
  }
}

async function run(clustering: ClusteringRequest, area: ClusterArea, jsons: string[]): Promise<CellFeature[]> {
  const texts = await cluster(clustering, area, pages(jsons));
  return texts.map((text) => JSON.parse(text) as CellFeature);
}

function ringOf(cell: CellFeature): number[][] {
  return (cell.geometry.coordinates as number[][][])[0];
}

// A bbox 360/1024 degrees wide has zoom 10, whose default H3 resolution is 7.
const MOUNTAIN_VIEW: [number, number] = [-122.0553238, 37.3615593];
const MOUNTAIN_VIEW_RES7 = '87283472bffffff';
const ZOOM10_BOX: BBox = [-122.2, 37.2, -122.2 + 360 / 1024, 37.5];

test('no clustering parameter: no request, options ignored', () => {
  assert.equal(parseClustering(undefined, new Map([['countmode', 'bogus']])), undefined);
});

test('hexbin defaults and every option', () => {
  assert.deepEqual(request('hexbin'), {
    kind: 'hexbin', absoluteResolution: undefined, relativeResolution: 0, property: undefined,
    pointmode: false, singlecoord: false, sampling: 'off',
  });
  assert.deepEqual(request('hexbin', {
    absoluteResolution: '9', relativeResolution: '-2', property: 'stats.population', pointmode: 'true', singlecoord: 'true', sampling: 'lowmed',
  }), {
    kind: 'hexbin', absoluteResolution: 9, relativeResolution: -2, property: 'stats.population',
    pointmode: true, singlecoord: true, sampling: 'lowmed',
  });
  // Names match case-insensitively; `resolution` is the deprecated alias; quoted strings are unquoted.
  const aliased = request('hexbin', { RESOLUTION: '4', PointMode: 'false', property: "'name'" }) as HexbinRequest;
  assert.equal(aliased.absoluteResolution, 4);
  assert.equal(aliased.property, 'name');
  // A property that looks like a number is still a property name.
  assert.equal((request('hexbin', { property: '2020' }) as HexbinRequest).property, '2020');
});

test('quadbin defaults and every option', () => {
  assert.deepEqual(request('quadbin'), { kind: 'quadbin', absoluteResolution: undefined, relativeResolution: 0, countmode: 'mixed', noBuffer: false });
  assert.deepEqual(request('quadbin', { relativeResolution: '4', absoluteResolution: '12', countmode: 'bool', noBuffer: 'true' }),
    { kind: 'quadbin', absoluteResolution: 12, relativeResolution: 4, countmode: 'bool', noBuffer: true });
  assert.equal(request('quadbin', { resolution: '3' }).relativeResolution, 3);
  for (const countmode of ['real', 'estimated', 'mixed', 'bool']) {
    assert.equal(request('quadbin', { countmode }).kind, 'quadbin');
  }
});

test('clustering other than hexbin or quadbin is refused', () => {
  for (const value of ['', 'Hexbin', 'h3', 'true']) assertRefused(value, {}, 'clustering');
});

test('unknown option names and wrong types are refused', () => {
  assertRefused('hexbin', { countmode: 'real' }, 'countmode');
  assertRefused('hexbin', { zoom: '3' }, 'zoom');
  assertRefused('quadbin', { property: 'a' }, 'property');
  assertRefused('quadbin', { pointmode: 'true' }, 'pointmode');
  assertRefused('hexbin', { absoluteResolution: 'abc' }, 'absoluteResolution');
  assertRefused('hexbin', { absoluteResolution: '1.5' }, 'absoluteResolution');
  assertRefused('hexbin', { absoluteResolution: '-1' }, 'absoluteResolution');
  assertRefused('hexbin', { resolution: 'true' }, 'resolution');
  assertRefused('hexbin', { relativeResolution: '3' }, 'relativeResolution');
  assertRefused('hexbin', { relativeResolution: '-3' }, 'relativeResolution');
  assertRefused('hexbin', { pointmode: 'yes' }, 'pointmode');
  assertRefused('hexbin', { singlecoord: '1' }, 'singlecoord');
  assertRefused('hexbin', { sampling: 'medium' }, 'sampling');
  assertRefused('hexbin', { property: '' }, 'property');
  assertRefused('hexbin', { property: 'a..b' }, 'property');
  assertRefused('quadbin', { relativeResolution: '5' }, 'relativeResolution');
  assertRefused('quadbin', { relativeResolution: '-1' }, 'relativeResolution');
  assertRefused('quadbin', { countmode: 'exact' }, 'countmode');
  assertRefused('quadbin', { noBuffer: 'TRUE' }, 'noBuffer');
  // The name in the message is the one the client sent.
  assertRefused('quadbin', { COUNTMODE: 'x' }, 'COUNTMODE');
});

test('here tiles refuse clustering', async () => {
  const here = parseTileId('here', '12', 'base4');
  assert.throws(() => checkClusterableTile(here), (error: unknown) => error instanceof HubError && error.code === 'clusteringOnHereTile' && error.status === 400);
  await assert.rejects(cluster(request('quadbin'), { bbox: tileBounds(here), tile: here, clip: false }, pages([])),
    (error: unknown) => error instanceof HubError && error.code === 'clusteringOnHereTile');
  checkClusterableTile(parseTileId('quadkey', '12', 'base4'));
});

test('hexbin zoom of a bbox and the H3 resolution table with its caps', () => {
  assert.equal(hexbinZoom([-180, -90, 180, 90]), 0);
  assert.equal(hexbinZoom([0, 0, 11.25, 1]), 5);
  assert.equal(hexbinZoom(ZOOM10_BOX), 10);
  assert.equal(hexbinZoom([1, 1, 1, 2]), 22);
  const hexbin = (options: Record<string, string>) => request('hexbin', options) as HexbinRequest;
  assert.equal(hexbinResolution(hexbin({}), 0), 2);
  assert.equal(hexbinResolution(hexbin({}), 7), 5);
  assert.equal(hexbinResolution(hexbin({}), 22), 13);
  assert.equal(hexbinResolution(hexbin({}), 30), 13);
  assert.equal(hexbinResolution(hexbin({ absoluteResolution: '3' }), 7), 3);
  assert.equal(hexbinResolution(hexbin({ absoluteResolution: '12' }), 7), 7);
  assert.equal(hexbinResolution(hexbin({ relativeResolution: '2' }), 7), 7);
  assert.equal(hexbinResolution(hexbin({ relativeResolution: '-2' }), 0), 0);
  assert.equal(hexbinResolution(hexbin({ absoluteResolution: '15' }), 20), 13);
  assert.equal(hexbinResolution(hexbin({ relativeResolution: '2' }), 20), 13);
});

test('hexbin counts features per H3 cell with the documented properties', async () => {
  const near = [point(...MOUNTAIN_VIEW), point(MOUNTAIN_VIEW[0] + 0.0001, MOUNTAIN_VIEW[1]), point(MOUNTAIN_VIEW[0], MOUNTAIN_VIEW[1] + 0.0001)];
  const far = point(-122.0, 37.45);
  const cells = await run(request('hexbin'), { bbox: ZOOM10_BOX, clip: false }, [...near, far]);
  assert.equal(cells.length, 2);
  const cell = cells.find((found) => found.properties.kind_detail === MOUNTAIN_VIEW_RES7);
  assert.ok(cell !== undefined, JSON.stringify(cells.map((found) => found.properties.kind_detail)));
  assert.equal(cell.type, 'Feature');
  assert.match(cell.id, /^[0-9a-f]{15}$/);
  assert.equal(cell.geometry.type, 'Polygon');
  assert.equal(ringOf(cell).length, 7);
  assert.deepEqual(ringOf(cell)[0], ringOf(cell)[6]);
  const { centroid, ...rest } = cell.properties;
  assert.deepEqual(rest, { kind: 'H3', kind_detail: MOUNTAIN_VIEW_RES7, resolution: 7, level: 10, aggregation: { qty: 3 }, pentagon: false });
  const [longitude, latitude] = centroid as number[];
  assert.ok(Math.abs(longitude - MOUNTAIN_VIEW[0]) < 0.02 && Math.abs(latitude - MOUNTAIN_VIEW[1]) < 0.02);
  // Stable ids: the same cell gets the same id on the next read.
  const again = await run(request('hexbin'), { bbox: ZOOM10_BOX, clip: false }, near);
  assert.equal(again[0].id, cell.id);
});

test('hexbin uses the tile level as zoom and honours absolute resolution', async () => {
  const tile = parseTileId('web', '10_164_396', 'base4');
  const cells = await run(request('hexbin', { absoluteResolution: '5' }), { bbox: tileBounds(tile), tile, clip: false }, [point(...MOUNTAIN_VIEW)]);
  assert.equal(cells[0].properties.level, 10);
  assert.equal(cells[0].properties.resolution, 5);
  assert.equal(cells[0].properties.kind_detail, '85283473fffffff');
});

test('hexbin property statistics', async () => {
  const jsons = [1, 2, 3, 10].map((value) => point(...MOUNTAIN_VIEW, { stats: { population: value } }));
  jsons.push(point(...MOUNTAIN_VIEW, { stats: { population: 'many' } }), point(...MOUNTAIN_VIEW, {}));
  const [cell] = await run(request('hexbin', { property: 'stats.population' }), { bbox: ZOOM10_BOX, clip: false }, jsons);
  assert.deepEqual(cell.properties.aggregation, { 'stats.population': { qty: 4, min: 1, max: 10, sum: 16, avg: 4, median: 2.5 } });
  const [none] = await run(request('hexbin', { property: 'missing' }), { bbox: ZOOM10_BOX, clip: false }, [point(...MOUNTAIN_VIEW)]);
  assert.deepEqual(none.properties.aggregation, { missing: { qty: 0, min: null, max: null, sum: null, avg: null, median: null } });
});

test('median over more values than the sample is close and independent of order', () => {
  const count = 3 * MEDIAN_SAMPLE_SIZE;
  const forward = new ValueStats();
  const backward = new ValueStats();
  for (let index = 0; index < count; index++) forward.add(index, `id${index}`);
  for (let index = count - 1; index >= 0; index--) backward.add(index, `id${index}`);
  const summary = forward.summary();
  assert.deepEqual(backward.summary(), summary);
  assert.equal(summary.qty, count);
  assert.equal(summary.min, 0);
  assert.equal(summary.max, count - 1);
  assert.equal(summary.sum, (count * (count - 1)) / 2);
  assert.ok(Math.abs((summary.median ?? 0) - count / 2) < count * 0.05, String(summary.median));
  const small = new ValueStats();
  for (const value of [5, 1, 3]) small.add(value, String(value));
  assert.equal(small.summary().median, 3);
});

test('hexbin pointmode: centroid point geometry, hexagon in the properties', async () => {
  const [cell] = await run(request('hexbin', { pointmode: 'true' }), { bbox: ZOOM10_BOX, clip: false }, [point(...MOUNTAIN_VIEW)]);
  assert.equal(cell.geometry.type, 'Point');
  assert.equal(cell.properties.centroid, undefined);
  const hexagon = cell.properties.hexagon as number[][][];
  assert.equal(hexagon[0].length, 7);
});

test('hexbin singlecoord bins a line by its first coordinate instead of its centre', async () => {
  const line = feature({ type: 'LineString', coordinates: [[...MOUNTAIN_VIEW, 0], [-121.9, 37.45, 0]] });
  const [byCentre] = await run(request('hexbin'), { bbox: ZOOM10_BOX, clip: false }, [line]);
  const [byFirst] = await run(request('hexbin', { singlecoord: 'true' }), { bbox: ZOOM10_BOX, clip: false }, [line]);
  assert.equal(byFirst.properties.kind_detail, MOUNTAIN_VIEW_RES7);
  assert.notEqual(byCentre.properties.kind_detail, MOUNTAIN_VIEW_RES7);
});

test('hexbin sampling keeps a stable share of the features by id', async () => {
  const jsons = Array.from({ length: 4000 }, (_, index) => point(...MOUNTAIN_VIEW, {}, `feature-${index}`));
  const qtyOf = async (sampling: string, input: string[]) => {
    const cells = await run(request('hexbin', { sampling }), { bbox: ZOOM10_BOX, clip: false }, input);
    return cells.length === 0 ? 0 : (cells[0].properties.aggregation as { qty: number }).qty;
  };
  assert.equal(await qtyOf('off', jsons), 4000);
  const low = await qtyOf('low', jsons);
  assert.ok(low > 400 && low < 600, `1/8 of 4000 should be near 500, got ${low}`);
  assert.equal(await qtyOf('low', [...jsons].reverse()), low);
  const lowmed = await qtyOf('lowmed', jsons);
  assert.ok(lowmed > 80 && lowmed < 170, `1/32 of 4000 should be near 125, got ${lowmed}`);
});

test('hexbin clip cuts cells to the box and changes their id', async () => {
  const box: BBox = [MOUNTAIN_VIEW[0] - 0.001, MOUNTAIN_VIEW[1] - 0.001, MOUNTAIN_VIEW[0] + 0.001, MOUNTAIN_VIEW[1] + 0.001];
  const options = { absoluteResolution: '7' };
  const [whole] = await run(request('hexbin', options), { bbox: box, clip: false }, [point(...MOUNTAIN_VIEW)]);
  const [clipped] = await run(request('hexbin', options), { bbox: box, clip: true }, [point(...MOUNTAIN_VIEW)]);
  assert.equal(whole.properties.kind_detail, clipped.properties.kind_detail);
  assert.notEqual(whole.id, clipped.id);
  const inside = ([x, y]: number[]) => x >= box[0] - 1e-12 && x <= box[2] + 1e-12 && y >= box[1] - 1e-12 && y <= box[3] + 1e-12;
  assert.ok(ringOf(clipped).every(inside), JSON.stringify(ringOf(clipped)));
  assert.ok(!ringOf(whole).every(inside));
  assert.deepEqual(ringOf(clipped)[0], ringOf(clipped).at(-1));
});

test('features without geometry are skipped', async () => {
  const empty = JSON.stringify({ type: 'Feature', id: 'x', geometry: null, properties: {} });
  assert.deepEqual(await run(request('hexbin'), { bbox: ZOOM10_BOX, clip: false }, [empty]), []);
  assert.deepEqual(await run(request('quadbin'), { bbox: ZOOM10_BOX, clip: false }, [empty]), []);
});

// Level-1 tile web/1_0_0 is the north-west quarter; its level-2 children are x 0..1, y 0..1.
const NORTH_WEST = parseTileId('web', '1_0_0', 'base4');
const NORTH_WEST_AREA: ClusterArea = { bbox: tileBounds(NORTH_WEST), tile: NORTH_WEST, clip: false };
const IN_0_1 = [point(-135, 60), point(-100, 50), point(-170, 30)];
const IN_1_0 = [point(-45, 80), point(-10, 70)];

test('quadbin counts a known set in the children of a tile', async () => {
  const cells = await run(request('quadbin', { relativeResolution: '1', countmode: 'real' }), NORTH_WEST_AREA, [...IN_1_0, ...IN_0_1]);
  assert.deepEqual(cells.map((cell) => cell.properties), [
    { count: 2, qk: '01', zxy: [2, 1, 0], xyz: '(0,1,2)', estimated: false, total_count: 5, equipartition_count: 1 },
    { count: 3, qk: '02', zxy: [2, 0, 1], xyz: '(1,0,2)', estimated: false, total_count: 5, equipartition_count: 1 },
  ]);
  assert.equal(quadkeyOf(2, 0, 1), '02');
  for (const cell of cells) assert.match(cell.id, /^\d{15}$/);
  // Default: each cell shrunk a little, so neighbours do not touch.
  const [west, south, east, north] = mercatorBounds(2, 1, 0, 2, 1);
  const ring = ringOf(cells[0]);
  assert.ok(ring[0][0] > west && ring[0][1] > south && ring[2][0] < east && ring[2][1] < north);
  assert.ok(east - ring[2][0] < (east - west) / 1000);
});

test('quadbin counts a line only in the cells its shape crosses, not in every cell of its bounding box', async () => {
  // From cell (0,0) down through (0,1) to (1,1): the line crosses longitude -90 at latitude 55, below cell (1,0).
  const line = feature({ type: 'LineString', coordinates: [[-170, 80], [-10, 30]] });
  const cells = await run(request('quadbin', { relativeResolution: '1', countmode: 'real' }), NORTH_WEST_AREA, [line]);
  assert.deepEqual(cells.map((cell) => cell.properties.zxy), [[2, 0, 0], [2, 0, 1], [2, 1, 1]]);
  assert.ok(cells.every((cell) => cell.properties.count === 1 && cell.properties.total_count === 1));
});

test('quadbin noBuffer keeps the exact cell, countmode bool counts 1', async () => {
  const cells = await run(request('quadbin', { relativeResolution: '1', noBuffer: 'true', countmode: 'bool' }), NORTH_WEST_AREA, [...IN_0_1, ...IN_1_0]);
  assert.deepEqual(cells.map((cell) => cell.properties.count), [1, 1]);
  const [west, south, east, north] = mercatorBounds(2, 1, 0, 2, 1);
  assert.deepEqual(ringOf(cells[0]), [[west, south], [east, south], [east, north], [west, north], [west, south]]);
});

test('quadbin relative resolution r gives the 4^r children of a tile', async () => {
  const tile = parseTileId('quadkey', '120', 'base4');
  const jsons: string[] = [];
  for (let y = 0; y < 16; y++) {
    for (let x = 0; x < 16; x++) {
      const [west, south, east, north] = mercatorBounds(7, tile.x * 16 + x, tile.y * 16 + y, tile.x * 16 + x + 1, tile.y * 16 + y + 1);
      jsons.push(point((west + east) / 2, (south + north) / 2));
    }
  }
  // One feature outside the tile (as a margin would bring) lands in no child.
  jsons.push(point(170, -40));
  const cells = await run(request('quadbin', { relativeResolution: '4' }), { bbox: tileBounds(tile), tile, clip: false }, jsons);
  assert.equal(cells.length, 256);
  assert.ok(cells.every((cell) => cell.properties.count === 1 && (cell.properties.qk as string).startsWith('120')));
  assert.equal(cells[0].properties.total_count, 256);
  assert.equal(cells[0].properties.equipartition_count, 1);
  assert.equal(new Set(cells.map((cell) => cell.id)).size, 256);
});

test('quadbin counts a polygon in every cell it spans', async () => {
  const polygon = feature({ type: 'Polygon', coordinates: [[[-100, 20, 0], [-80, 20, 0], [-80, 70, 0], [-100, 70, 0], [-100, 20, 0]]] });
  const cells = await run(request('quadbin', { relativeResolution: '1' }), NORTH_WEST_AREA, [polygon]);
  // Lon −100..−80 crosses the level-2 column edge at −90, lat 20..70 the row edge at 66.51°.
  assert.deepEqual(cells.map((cell) => cell.properties.qk), ['00', '01', '02', '03']);
  assert.ok(cells.every((cell) => cell.properties.total_count === 1));
});

test('quadbin over a bbox: base level from its width, cells clipped to the box', async () => {
  const box: BBox = [-100, 10, -10, 40];
  assert.equal(quadbinBaseLevel(box), 2);
  const jsons = [point(-95, 15), point(-60, 30), point(-20, 35)];
  const cells = await run(request('quadbin'), { bbox: box, clip: true }, jsons);
  assert.deepEqual(cells.map((cell) => [cell.properties.zxy, cell.properties.count]), [[[2, 0, 1], 1], [[2, 1, 1], 2]]);
  for (const cell of cells) {
    for (const [x, y] of ringOf(cell)) assert.ok(x >= box[0] && x <= box[2] && y >= box[1] && y <= box[3], `${x},${y}`);
  }
  const unclipped = await run(request('quadbin'), { bbox: box, clip: false }, jsons);
  assert.notEqual(unclipped[0].id, cells[0].id);
  assert.ok(ringOf(unclipped[0])[0][0] < box[0]);
});

test('quadbin levels stay within base + 5 and the cell budget', async () => {
  const world: BBox = [-180, -85, 180, 85];
  const cells = await run(request('quadbin', { absoluteResolution: '20' }), { bbox: world, clip: false }, [point(10, 10)]);
  assert.equal((cells[0].properties.zxy as number[])[0], 5);
  // Below the tile level, the tile's own level is used.
  const tile = parseTileId('web', '3_4_2', 'base4');
  const [own] = await run(request('quadbin', { absoluteResolution: '1' }), { bbox: tileBounds(tile), tile, clip: false }, [point(...centre(tileBounds(tile)))]);
  assert.deepEqual(own.properties.zxy, [3, 4, 2]);
});

function centre(box: BBox): [number, number] {
  return [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2];
}
