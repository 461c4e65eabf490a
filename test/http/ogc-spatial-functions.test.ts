// CQL2 spatial functions on OGC items (issue 26): S_WITHIN, S_CONTAINS, S_DISJOINT, S_EQUALS, S_TOUCHES, S_CROSSES, S_OVERLAPS with WKT and GeoJSON literals select what PostGIS's ST_… select over a plain table of the same features, on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { call, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres-cluster.js';
import { seededRandom } from '../helpers/seeded-random.js';

type Position = [number, number];
type Geometry = { type: 'Point'; coordinates: Position } | { type: 'LineString'; coordinates: Position[] } | { type: 'Polygon'; coordinates: Position[][] };

interface Feature {
  type: 'Feature';
  id: string;
  geometry: Geometry | null;
  properties: Record<string, unknown>;
}

const square = (west: number, south: number, east: number, north: number): Geometry =>
  ({ type: 'Polygon', coordinates: [[[west, south], [east, south], [east, north], [west, north], [west, south]]] });

/**
 * Points, segments and rectangles on an integer grid, so that many of them touch, share edges or equal the literals:
 * the boundary cases where the relations differ.
 */
function features(): Feature[] {
  const rand = seededRandom(2626);
  const grid = () => Math.floor(rand() * 11);
  const made: Feature[] = [];
  for (let i = 0; i < 240; i++) {
    const shape = rand();
    const [x, y] = [grid(), grid()];
    const geometry: Geometry | null = shape < 0.05 ? null
      : shape < 0.35 ? { type: 'Point', coordinates: [x, y] }
        : shape < 0.65 ? { type: 'LineString', coordinates: [[x, y], [grid(), grid()]] }
          : square(x, y, x + 1 + Math.floor(rand() * 4), y + 1 + Math.floor(rand() * 4));
    if (geometry?.type === 'LineString' && geometry.coordinates[0].join() === geometry.coordinates[1].join()) geometry.coordinates[1] = [x + 1, y];
    made.push({ type: 'Feature', id: `g${i}`, geometry, properties: { i } });
  }
  made.push({ type: 'Feature', id: 'same-square', geometry: square(2, 2, 6, 6), properties: {} });
  return made;
}

/** The literals, as WKT and GeoJSON. */
const LITERALS: Array<{ name: string; wkt: string; json: Geometry }> = [
  { name: 'square', wkt: 'POLYGON((2 2,6 2,6 6,2 6,2 2))', json: square(2, 2, 6, 6) },
  { name: 'triangle', wkt: 'POLYGON((0 0,10 0,5 8,0 0))', json: { type: 'Polygon', coordinates: [[[0, 0], [10, 0], [5, 8], [0, 0]]] } },
  { name: 'diagonal', wkt: 'LINESTRING(0 0,10 10)', json: { type: 'LineString', coordinates: [[0, 0], [10, 10]] } },
  { name: 'point', wkt: 'POINT(3 3)', json: { type: 'Point', coordinates: [3, 3] } },
];
const FUNCTIONS = ['S_WITHIN', 'S_CONTAINS', 'S_DISJOINT', 'S_EQUALS', 'S_TOUCHES', 'S_CROSSES', 'S_OVERLAPS'];
const POSTGIS: Record<string, string> = {
  S_WITHIN: 'ST_Within', S_CONTAINS: 'ST_Contains', S_DISJOINT: 'ST_Disjoint', S_EQUALS: 'ST_Equals', S_TOUCHES: 'ST_Touches', S_CROSSES: 'ST_Crosses', S_OVERLAPS: 'ST_Overlaps',
};

const FEATURES = features();
const skip = postgresUnavailable();
const itemIds = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => String(feature.id));

describe('CQL2 spatial functions, PostGIS as the oracle', { skip }, () => {
  let oracle: TestDatabase;
  /** `FUNCTION literal` and `FUNCTION literal turned` (the literal first) → the ids PostGIS selects, sorted. */
  const expected = new Map<string, string[]>();

  before(async () => {
    oracle = await createTestDatabase();
    const db = new pg.Client({ connectionString: oracle.url });
    await db.connect();
    try {
      await db.query('CREATE TABLE oracle (id text COLLATE "C" PRIMARY KEY, geom geometry(Geometry, 4326))');
      await db.query(`INSERT INTO oracle SELECT f ->> 'id', CASE WHEN json_typeof(f -> 'geometry') = 'object' THEN ST_GeomFromGeoJSON(f -> 'geometry') END
        FROM json_array_elements($1::json) f`, [JSON.stringify(FEATURES)]);
      for (const literal of LITERALS) {
        for (const name of FUNCTIONS) {
          const reference = `ST_SetSRID(ST_GeomFromText('${literal.wkt}'), 4326)`;
          const select = async (where: string) => (await db.query<{ id: string }>(`SELECT id FROM oracle WHERE ${where} ORDER BY id`)).rows.map((row) => row.id);
          expected.set(`${name} ${literal.name}`, await select(`${POSTGIS[name]}(geom, ${reference})`));
          expected.set(`${name} ${literal.name} turned`, await select(`${POSTGIS[name]}(${reference}, geom)`));
        }
      }
    } finally {
      await db.end();
    }
  });
  after(async () => { await oracle?.remove(); });

  test('the oracle tells features apart with every function', () => {
    for (const name of FUNCTIONS) {
      const counts = LITERALS.map((literal) => expected.get(`${name} ${literal.name}`)!.length);
      assert.ok(counts.some((count) => count > 0 && count < FEATURES.length), `${name}: ${counts.join(',')}`);
    }
    assert.deepEqual(expected.get('S_EQUALS square'), ['same-square']);
  });

  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      let space: string;
      const found = async (filter: string, language = 'cql2-text') => {
        const response = await call(hub, 'GET', `/ogc/collections/${space}/items?${new URLSearchParams({ filter, 'filter-lang': language, limit: '10000' })}`);
        assert.equal(response.status, 200, response.text);
        return itemIds(response).sort();
      };

      before(async () => {
        hub = await startHub({ backend });
        space = await createSpaceWith(hub, FEATURES, { title: 'spatial functions' });
      });
      after(async () => { await hub?.stop(); });

      test('each function with each WKT literal, either way round, selects the oracle\'s features', async () => {
        for (const literal of LITERALS) {
          for (const name of FUNCTIONS) {
            assert.deepEqual(await found(`${name}(geometry, ${literal.wkt})`), expected.get(`${name} ${literal.name}`), `${name}(geometry, ${literal.wkt})`);
            assert.deepEqual(await found(`${name}(${literal.wkt}, geometry)`), expected.get(`${name} ${literal.name} turned`), `${name}(${literal.wkt}, geometry)`);
          }
        }
      });

      test('each function with GeoJSON literals in CQL2 JSON, and with a BBOX, and beside other conditions', async () => {
        for (const literal of LITERALS) {
          for (const name of FUNCTIONS) {
            const filter = JSON.stringify({ op: name.toLowerCase(), args: [{ property: 'geometry' }, literal.json] });
            assert.deepEqual(await found(filter, 'cql2-json'), expected.get(`${name} ${literal.name}`), filter);
          }
        }
        assert.deepEqual(await found('S_WITHIN(geometry, BBOX(2,2,6,6))'), expected.get('S_WITHIN square'));
        assert.deepEqual(await found('S_DISJOINT(geometry, BBOX(2,2,6,6))'), expected.get('S_DISJOINT square'));
        const some = expected.get('S_DISJOINT triangle')!.filter((id) => Number(id.slice(1)) < 100);
        assert.deepEqual(await found('i < 100 AND S_DISJOINT(geometry, POLYGON((0 0,10 0,5 8,0 0)))'), some);
      });

      test('a literal that is no geometry, or a function of another property, is a 400', async () => {
        for (const filter of ['S_WITHIN(geometry, POLYGON((0 0,1 0,0 0)))', 'S_CONTAINS(i, POINT(1 1))', 'S_DISJOINT(geometry, 5)', 'NOT S_WITHIN(geometry, POINT(1 1))']) {
          const response = await call(hub, 'GET', `/ogc/collections/${space}/items?${new URLSearchParams({ filter })}`);
          assert.equal(response.status, 400, `${filter}: ${response.text}`);
          assert.ok(['ogcInvalidFilter', 'ogcFilterSyntax'].includes(String(response.body.code)), response.text);
        }
      });
    });
  }
});
