// PostgreSQL's indexed copies of a feature (geometry from hex EWKB, user properties as jsonb, tags), as inserts and updates store them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { BACKENDS } from '../helpers/backends.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import type { Geometry } from '../../src/geo/geometry.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { SpaceKey, Storage } from '../../src/storage/storage.js';
import { spaceWith, type TestFeature } from './storage-fixture.js';

const NS = '@ns:com:here:xyz';

/** Every geometry type, with 3D positions (the column holds 2D), a polygon with a hole and negative coordinates. */
const GEOMETRIES: Record<string, Geometry> = {
  point: { type: 'Point', coordinates: [-122.419415, 37.774929, 12.5] },
  multipoint: { type: 'MultiPoint', coordinates: [[1, 2], [3.25, -4.5, 7]] },
  line: { type: 'LineString', coordinates: [[0, 0, 1], [10.5, 10], [20, -5]] },
  multiline: { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2, 2], [3, 3, 3], [4, 2, 2]]] },
  polygon: {
    type: 'Polygon',
    coordinates: [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], [[2, 2], [2, 4], [4, 4], [4, 2], [2, 2]]],
  },
  multipolygon: {
    type: 'MultiPolygon',
    coordinates: [
      [[[100, 0, 5], [101, 0, 5], [101, 1, 5], [100, 1, 5], [100, 0, 5]]],
      [[[-100, -50], [-99, -50], [-99, -49], [-100, -49], [-100, -50]], [[-99.8, -49.8], [-99.2, -49.8], [-99.2, -49.2], [-99.8, -49.8]]],
    ],
  },
};

/** The geometry with every position cut to x and y, as the geometry column holds it. */
function planar(geometry: Geometry): unknown {
  const cut = (value: unknown): unknown => (typeof (value as unknown[])[0] === 'number' ? (value as number[]).slice(0, 2) : (value as unknown[]).map(cut));
  return { type: geometry.type, coordinates: cut(geometry.coordinates) };
}

interface Columns { id: string; geometry: unknown; srid: number | null; properties: Record<string, unknown>; tags: string[] }

describe('PostgreSQL feature columns', { skip: !BACKENDS.includes('postgres') }, () => {
  let database: Awaited<ReturnType<typeof createTestDatabase>>;
  let storage: Storage;
  let sql: pg.Client;
  let space: SpaceKey;

  const columns = async (): Promise<Map<string, Columns>> => {
    const { rows } = await sql.query<Columns>(
      `SELECT id, ST_AsGeoJSON(geom, 15)::json AS geometry, ST_SRID(geom) AS srid, properties, tags FROM features WHERE sid = $1`, [space.sid]);
    return new Map(rows.map((row) => [row.id, row]));
  };

  const features = (round: number): TestFeature[] => [
    ...Object.entries(GEOMETRIES).map(([id, geometry]) => ({
      id, geometry, properties: { round, name: id, [NS]: { tags: ['ignored'] } }, tags: [id, `round-${round}`],
    })),
    { id: 'bare', geometry: null, properties: { round }, tags: [] },
  ];

  before(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.url);
    sql = new pg.Client({ connectionString: database.url });
    await sql.connect();
    space = await spaceWith(storage, 'columns', features(1));
  });
  after(async () => {
    await sql.end();
    await storage.close();
    await database.remove();
  });

  const check = async (round: number) => {
    const stored = await columns();
    for (const feature of features(round)) {
      const row = stored.get(feature.id);
      assert.ok(row, feature.id);
      assert.deepEqual(row.geometry, feature.geometry && planar(feature.geometry), `${feature.id}: geometry`);
      assert.equal(row.srid, feature.geometry ? 4326 : null, `${feature.id}: SRID`);
      const { [NS]: _namespace, ...userProperties } = feature.properties;
      assert.deepEqual(row.properties, userProperties, `${feature.id}: the jsonb column holds the user properties without the namespace`);
      assert.deepEqual(row.tags, feature.tags, `${feature.id}: tags`);
    }
  };

  test('inserted by COPY', async () => {
    await check(1);
  });

  test('updated in place', async () => {
    const upserts = features(2);
    await storage.features.write(space, upserts.map((feature) => feature.id), () => ({
      plan: {
        upserts: upserts.map((feature) => ({
          id: feature.id,
          json: JSON.stringify({ type: 'Feature', id: feature.id, geometry: feature.geometry, properties: feature.properties }),
          geometryType: feature.geometry?.type ?? null,
          bbox: null,
          tags: feature.tags ?? [],
        })),
        deletes: [],
        timestamp: Date.now(),
      },
      result: undefined,
    }));
    await check(2);
  });
});
