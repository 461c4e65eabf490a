// PostGIS is the oracle: seeded random bbox, tile, radius and geometry reads on both engines return exactly the ids that PostGIS computes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { cellToBoundary, latLngToCell } from 'h3-js';
import pg from 'pg';
import { call, createSpace } from '../helpers/http-client.js';
import { type Backend, BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres-cluster.js';
import { seededRandom } from '../helpers/seeded-random.js';

interface OracleFeature {
  type: 'Feature';
  id: string;
  geometry: { type: string; coordinates: unknown };
  properties: Record<string, unknown>;
}

const rand = seededRandom(20261123);
const between = (low: number, high: number) => low + (high - low) * rand();
const round = (value: number) => Math.round(value * 1e6) / 1e6;
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];

function countries(): OracleFeature[] {
  const collection = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/countries.geo.json'), 'utf8')) as { features: OracleFeature[] };
  // Two features share the id "-99": the name tells them apart.
  return collection.features.map((feature) => ({ ...feature, id: feature.id === '-99' ? `x-${String(feature.properties.name)}` : feature.id }));
}

/** Points over the whole world (poles and the antimeridian included) and short lines, some crossing country borders. */
function generated(): OracleFeature[] {
  const features: OracleFeature[] = [];
  for (let i = 0; i < 2500; i++) {
    const coordinates = [round(between(-180, 180)), round(between(-90, 90))];
    features.push({ type: 'Feature', id: `p${i}`, geometry: { type: 'Point', coordinates }, properties: { n: i } });
  }
  for (let i = 0; i < 500; i++) {
    const start = [between(-179, 179), between(-85, 85)];
    const coordinates = [start, [start[0] + between(-1, 1), start[1] + between(-1, 1)], [start[0] + between(-1, 1), start[1] + between(-1, 1)]]
      .map(([lon, lat]) => [round(Math.max(-180, Math.min(180, lon))), round(Math.max(-90, Math.min(90, lat)))]);
    features.push({ type: 'Feature', id: `l${i}`, geometry: { type: 'LineString', coordinates }, properties: { n: i } });
  }
  return features;
}

const FEATURES = [...countries(), ...generated()];

/**
 * A location at the data: a random vertex of a random feature, so most queries find something; one in
 * four is moved up to 2 degrees away, so some find nothing.
 */
function nearData(): [number, number] {
  const feature = pick(FEATURES);
  const flat = JSON.stringify(feature.geometry.coordinates).match(/-?[\d.]+(e-?\d+)?,-?[\d.]+(e-?\d+)?/g) ?? ['0,0'];
  const [lon, lat] = pick(flat).split(',').map(Number);
  const jitter = rand() < 0.25 ? 2 : 0;
  return [Math.max(-180, Math.min(180, lon + between(-jitter, jitter))), Math.max(-89.9, Math.min(89.9, lat + between(-jitter, jitter)))];
}

interface Query {
  label: string;
  /** The hub request. */
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** The oracle: SQL over the table `oracle (id, geom)` returning the matching ids. */
  sql: string;
  values: unknown[];
  /** Radius queries: metres, for the tolerance of 0.1 % at the edge. */
  radius?: { sql: string; values: unknown[]; metres: number };
}

function bboxQuery(): Query {
  const [lon, lat] = nearData();
  const size = pick([0.2, 2, 10, 40, 200]) * rand() + 0.01;
  let corners = [lon - size, lat - size / 2, lon + size, lat + size / 2]
    .map((value, i) => round(Math.max(i % 2 === 0 ? -180 : -90, Math.min(i % 2 === 0 ? 180 : 90, value))));
  // Swapped corners select the same box (API.md 6.1).
  if (rand() < 0.2) corners = [corners[2], corners[3], corners[0], corners[1]];
  const [west, south, east, north] = corners;
  return {
    label: `bbox ${corners.join(',')}`,
    method: 'GET',
    path: `/bbox?west=${west}&south=${south}&east=${east}&north=${north}`,
    sql: 'SELECT id FROM oracle WHERE ST_Intersects(geom, ST_MakeEnvelope(least($1::float8,$3), least($2::float8,$4), greatest($1::float8,$3), greatest($2::float8,$4), 4326))',
    values: corners,
  };
}

function quadkey(level: number, x: number, y: number): string {
  let key = '';
  for (let i = level; i > 0; i--) key += String(((x >> (i - 1)) & 1) + 2 * ((y >> (i - 1)) & 1));
  return key;
}

/**
 * Web tile bounds straight from the formulas of API.md 6.2, enlarged by margin/256 tile widths in tile
 * space and clamped at the world's edge, computed by PostgreSQL.
 */
const WEB_TILE_BOX = `ST_MakeEnvelope(
  greatest($2::float8 - $4 / 256.0, 0) / 2 ^ $1 * 360 - 180,
  degrees(atan(sinh(pi() * (1 - 2 * least($3::float8 + 1 + $4 / 256.0, 2 ^ $1) / 2 ^ $1)))),
  least($2::float8 + 1 + $4 / 256.0, 2 ^ $1) / 2 ^ $1 * 360 - 180,
  degrees(atan(sinh(pi() * (1 - 2 * greatest($3::float8 - $4 / 256.0, 0) / 2 ^ $1)))), 4326)`;

function webTileQuery(): Query {
  const [lon, lat] = nearData();
  const z = Math.floor(between(0, 13));
  const n = 2 ** z;
  const clampedLat = Math.max(-85.05, Math.min(85.05, lat));
  const x = Math.min(n - 1, Math.floor(((lon + 180) / 360) * n));
  const radians = (clampedLat * Math.PI) / 180;
  const y = Math.min(n - 1, Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * n));
  const margin = rand() < 0.5 ? 0 : pick([4, 20, 64]);
  const scheme = pick(['web', 'tms', 'quadkey'] as const);
  const id = scheme === 'web' ? `${z}_${x}_${y}` : scheme === 'tms' ? `${z}_${x}_${n - 1 - y}` : quadkey(z, x, y);
  // The quadkey of level 0 is empty, which is no path segment.
  if (scheme === 'quadkey' && z === 0) return webTileQuery();
  return {
    label: `tile ${scheme}/${id} margin ${margin}`,
    method: 'GET',
    path: `/tile/${scheme}/${id}?margin=${margin}`,
    sql: `SELECT id FROM oracle WHERE ST_Intersects(geom, ${WEB_TILE_BOX})`,
    values: [z, x, y, margin],
  };
}

function hereTileQuery(): Query {
  const [lon, lat] = nearData();
  const level = Math.floor(between(1, 15));
  const size = 360 / 2 ** level;
  const x = Math.min(2 ** level - 1, Math.floor((lon + 180) / size));
  const y = Math.min(Math.floor((2 ** level - 1) / 2), Math.floor((lat + 90) / size));
  const id = rand() < 0.5 ? `${level}_${x}_${y}` : quadkey(level, x, y);
  return {
    label: `tile here/${id}`,
    method: 'GET',
    // Margins are ignored for here tiles (API.md 6.2).
    path: `/tile/here/${id}?margin=${rand() < 0.5 ? 0 : 20}`,
    sql: 'SELECT id FROM oracle WHERE ST_Intersects(geom, ST_MakeEnvelope($2::float8 * $1 - 180, $3::float8 * $1 - 90, $2::float8 * $1 - 180 + $1, $3::float8 * $1 - 90 + $1, 4326))',
    values: [size, x, y],
  };
}

function radiusQuery(): Query {
  const [lon, lat] = nearData().map(round);
  const metres = Math.round(Math.exp(between(Math.log(100), Math.log(500_000))));
  const reference = 'ST_SetSRID(ST_MakePoint($1, $2), 4326)::geography';
  return {
    label: `spatial lat=${lat} lon=${lon} radius=${metres}`,
    method: 'GET',
    path: `/spatial?lat=${lat}&lon=${lon}&radius=${metres}`,
    sql: `SELECT id FROM oracle WHERE ST_DWithin(geom::geography, ${reference}, $3)`,
    values: [lon, lat, metres],
    radius: { sql: `SELECT id, ST_Distance(geom::geography, ${reference}) AS distance FROM oracle WHERE id = ANY($3)`, values: [lon, lat], metres },
  };
}

function geometryQuery(): Query {
  const [lon, lat] = nearData();
  const size = pick([0.05, 0.5, 3, 12]) * (0.2 + rand());
  const around = (count: number) => Array.from({ length: count }, (_, i) => {
    const angle = (2 * Math.PI * i) / count + between(0, 0.3);
    return [round(Math.max(-180, Math.min(180, lon + size * Math.cos(angle)))), round(Math.max(-90, Math.min(90, lat + size * Math.sin(angle))))];
  });
  const kind = pick(['Polygon', 'LineString', 'Point', 'h3'] as const);
  let geometry: { type: string; coordinates: unknown };
  if (kind === 'Polygon') {
    const ring = around(Math.floor(between(3, 8)));
    geometry = { type: 'Polygon', coordinates: [[...ring, ring[0]]] };
  } else if (kind === 'LineString') {
    geometry = { type: 'LineString', coordinates: around(Math.floor(between(2, 5))) };
  } else if (kind === 'Point') {
    geometry = { type: 'Point', coordinates: [round(lon), round(lat)] };
  } else {
    const cell = latLngToCell(lat, lon, Math.floor(between(2, 7)));
    return {
      label: `spatial h3Index=${cell}`,
      method: 'GET',
      path: `/spatial?h3Index=${cell}`,
      sql: 'SELECT id FROM oracle WHERE ST_Intersects(geom, ST_GeomFromGeoJSON($1))',
      values: [JSON.stringify({ type: 'Polygon', coordinates: [cellToBoundary(cell, true)] })],
    };
  }
  return {
    label: `POST spatial ${JSON.stringify(geometry)}`,
    method: 'POST',
    path: '/spatial',
    body: geometry,
    sql: 'SELECT id FROM oracle WHERE ST_Intersects(geom, ST_GeomFromGeoJSON($1))',
    values: [JSON.stringify(geometry)],
  };
}

const QUERIES: Query[] = [
  ...Array.from({ length: 600 }, bboxQuery),
  ...Array.from({ length: 450 }, webTileQuery),
  ...Array.from({ length: 250 }, hereTileQuery),
  ...Array.from({ length: 400 }, radiusQuery),
  ...Array.from({ length: 400 }, geometryQuery),
];

/** Runs `work` over the items with a few in flight at once. */
async function inParallel<T>(items: readonly T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) await work(items[next++]);
  }));
}

const skip = postgresUnavailable();

describe('spatial reads against PostGIS as the oracle', { skip }, () => {
  let oracle: TestDatabase;
  let db: pg.Pool;
  const hubs = new Map<Backend, { hub: HubProcess; space: string }>();
  const expected = new Map<Query, string[]>();

  before(async () => {
    oracle = await createTestDatabase();
    db = new pg.Pool({ connectionString: oracle.url, max: 4 });
    await db.query('CREATE TABLE oracle (id text PRIMARY KEY, geom geometry(Geometry, 4326) NOT NULL)');
    await db.query(`INSERT INTO oracle SELECT f ->> 'id', ST_GeomFromGeoJSON(f -> 'geometry') FROM json_array_elements($1::json) f`,
      [JSON.stringify(FEATURES)]);
    // The oracle's answers and each engine's hub are independent: made side by side, a round trip's wait is another's work.
    const answers = inParallel(QUERIES, 4, async (query) => {
      expected.set(query, (await db.query<{ id: string }>(query.sql, query.values)).rows.map((row) => row.id).sort());
    });
    await Promise.all([answers, ...BACKENDS.map(async (backend) => {
      const hub = await startHub({ backend });
      hubs.set(backend, { hub, space: '' });
      const space = await createSpace(hub);
      for (let i = 0; i < FEATURES.length; i += 1000) {
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: FEATURES.slice(i, i + 1000) } });
        assert.equal(put.status, 200, put.text);
      }
      hubs.set(backend, { hub, space });
    })]);
  });
  after(async () => {
    for (const { hub } of hubs.values()) await hub.stop();
    await db?.end();
    await oracle?.remove();
  });

  test('the oracle itself finds features for most queries', () => {
    const empty = QUERIES.filter((query) => expected.get(query)?.length === 0).length;
    assert.ok(QUERIES.length >= 2000, `${QUERIES.length} queries`);
    assert.ok(empty < QUERIES.length / 4, `${empty} of ${QUERIES.length} queries match nothing`);
  });

  for (const backend of BACKENDS) {
    test(`${backend}: every query returns the ids PostGIS returns (radius: except within 0.1 % of the radius)`, async (t) => {
      const entry = hubs.get(backend);
      assert.ok(entry);
      const failures: string[] = [];
      let atTheEdge = 0;
      await inParallel(QUERIES, 8, async (query) => {
        const separator = query.path.includes('?') ? '&' : '?';
        const response = await call(entry.hub, query.method, `/hub/spaces/${entry.space}${query.path}${separator}limit=100000`,
          query.body === undefined ? {} : { body: query.body });
        if (response.status !== 200) {
          failures.push(`${query.label}: ${response.status} ${response.text.slice(0, 200)}`);
          return;
        }
        const got = ((response.body.features ?? []) as Array<{ id: string }>).map((feature) => feature.id).sort();
        const want = expected.get(query) ?? [];
        const wanted = new Set(want);
        const found = new Set(got);
        const differing = [...want.filter((id) => !found.has(id)), ...got.filter((id) => !wanted.has(id))];
        if (got.length !== found.size) failures.push(`${query.label}: an id came twice`);
        if (differing.length === 0) return;
        if (query.radius) {
          const { rows } = await db.query<{ id: string; distance: number }>(query.radius.sql, [...query.radius.values, differing]);
          const metres = query.radius.metres;
          const beyond = rows.filter((row) => Math.abs(row.distance - metres) > metres * 0.001);
          atTheEdge += rows.length - beyond.length;
          if (beyond.length === 0) return;
        }
        failures.push(`${query.label}: differs in ${differing.slice(0, 10).join(', ')}`);
      });
      t.diagnostic(`${QUERIES.length} queries; radius results within 0.1 % of the radius that differ from PostGIS: ${atTheEdge}`);
      assert.deepEqual(failures.slice(0, 20), [], `${failures.length} of ${QUERIES.length} queries differ`);
    });
  }
});
