// The PostgreSQL spatial filter (box, geometry, distance) through the Storage interface: combined with tags, properties, ids and paging.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS } from '../helpers/backends.js';
import type { FeatureQuery } from '../../src/core/feature-query.js';
import type { SpaceKey } from '../../src/storage/storage.js';
import { openTestStorage, spaceWith, type OpenedStorage, type TestFeature } from './storage-fixture.js';

/** A 50 × 50 grid of points at 0.1° steps from (0, 0): 2,500 features, every other one tagged `even`. */
const GRID: TestFeature[] = [];
for (let i = 0; i < 50; i++) {
  for (let j = 0; j < 50; j++) {
    const n = i * 50 + j;
    GRID.push({ id: `p${n}`, geometry: { type: 'Point', coordinates: [i / 10, j / 10] }, properties: { n }, tags: n % 2 === 0 ? ['even'] : [] });
  }
}
const EXTRA: TestFeature[] = [
  { id: 'square', geometry: { type: 'Polygon', coordinates: [[[20, 20], [21, 20], [21, 21], [20, 21], [20, 20]]] }, properties: { n: -1 } },
  { id: 'line', geometry: { type: 'LineString', coordinates: [[19, 22], [22, 19]] }, properties: { n: -2 } },
  { id: 'bare', geometry: null, properties: { n: -3 } },
];

async function ids(storage: OpenedStorage['storage'], space: SpaceKey, query: FeatureQuery): Promise<string[]> {
  const result: string[] = [];
  for await (const page of storage.features.query(space, query)) for (const row of page) result.push((JSON.parse(row.json) as { id: string }).id);
  return result;
}

async function textIds(storage: OpenedStorage['storage'], space: SpaceKey, query: FeatureQuery): Promise<string[]> {
  const result: string[] = [];
  for await (const page of storage.features.queryText(space, query)) {
    result.push(...(JSON.parse(`[${page.text.toString()}]`) as Array<{ id: string }>).map((feature) => feature.id));
  }
  return result;
}

describe('PostgreSQL spatial filter', { skip: !BACKENDS.includes('postgres') }, () => {
  let opened: OpenedStorage;
  let space: SpaceKey;
  let other: SpaceKey;
  before(async () => {
    opened = await openTestStorage('postgres');
    space = await spaceWith(opened.storage, 'grid', [...GRID, ...EXTRA]);
    // The same places in another space must never leak into the first.
    other = await spaceWith(opened.storage, 'other', GRID.map((feature) => ({ ...feature, id: `o-${feature.id}` })));
  });
  after(async () => { await opened.close(); });

  test('box: intersecting features in insertion order, edges included, across the 1,000-row page boundary', async () => {
    const expected = GRID.filter(({ geometry }) => geometry?.type === 'Point' && geometry.coordinates[0] <= 2.5 && geometry.coordinates[1] <= 4.9)
      .map((feature) => feature.id);
    assert.ok(expected.length > 1000);
    const query: FeatureQuery = { spatial: { kind: 'box', box: [0, 0, 2.5, 4.9] }, limit: 100_000 };
    assert.deepEqual(await ids(opened.storage, space, query), expected);
    assert.deepEqual(await textIds(opened.storage, space, query), expected);
    assert.deepEqual(await ids(opened.storage, space, { ...query, limit: 1001 }), expected.slice(0, 1001));
    const others = await ids(opened.storage, other, query);
    assert.equal(others.length, expected.length);
    assert.ok(others.every((id) => id.startsWith('o-')));
  });

  test('box with tags and property filters', async () => {
    const query: FeatureQuery = {
      spatial: { kind: 'box', box: [0, 0, 0.3, 0.3] }, tags: [['even']],
      properties: [{ path: ['properties', 'n'], op: 'lt', values: [60] }], limit: 100,
    };
    assert.deepEqual(await ids(opened.storage, space, query), ['p0', 'p2', 'p50', 'p52']);
  });

  test('geometry: polygons and lines intersecting, points not', async () => {
    const query: FeatureQuery = {
      spatial: { kind: 'geometry', geometry: { type: 'LineString', coordinates: [[20.5, 19], [20.5, 23]] }, bounds: [20.5, 19, 20.5, 23] },
      limit: 10,
    };
    assert.deepEqual(await ids(opened.storage, space, query), ['square', 'line']);
    const miss: FeatureQuery = { spatial: { kind: 'geometry', geometry: { type: 'Point', coordinates: [30, 30] }, bounds: [30, 30, 30, 30] }, limit: 10 };
    assert.deepEqual(await ids(opened.storage, space, miss), []);
  });

  test('distance: metres on the spheroid, with the ids filter', async () => {
    // 0.1° of latitude is about 11.06 km at the equator: 12 km from (0, 0) reaches (0, 0.1) and (0.1, 0) but not (0.1, 0.1) (15.6 km).
    const query: FeatureQuery = {
      spatial: { kind: 'distance', geometry: { type: 'Point', coordinates: [0, 0] }, radius: 12_000, bounds: [-0.2, -0.2, 0.2, 0.2] },
      limit: 100,
    };
    assert.deepEqual(await ids(opened.storage, space, query), ['p0', 'p1', 'p50']);
    assert.deepEqual(await ids(opened.storage, space, { ...query, ids: ['p50', 'p51', 'p0'] }), ['p50', 'p0']);
  });
});
