// CQL2 filters on OGC items (issue 26): the standard's examples, in text and JSON, answer as PostGIS does over a plain table of the same features, on both engines; GDAL sends CQL2 and gets the oracle's features; bad filters are 400s.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import pg from 'pg';
import { call, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, ROOT, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres-cluster.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';

/** One of the standard's examples (cql2/standard/schema/examples), with the WHERE clause that answers it over `oracle`. */
interface Example {
  example: string;
  text: string;
  json: unknown;
  oracle: string;
}

const EXAMPLES = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/cql2-examples.json'), 'utf8')) as Example[];
const GDAL_MISSING = spawnSync('ogr2ogr', ['--version']).error !== undefined;
const run = promisify(execFile);

/** Property name → oracle column type; every example's property is one of these. */
const COLUMNS: Record<string, string> = {
  city: 'text', cityName: 'text', name: 'text', depth: 'float8', category: 'int', 'landsat:scene_id': 'text', 'eo:instrument': 'text',
  'eo:cloud_cover': 'float8', 'landsat:wrs_row': 'int', 'landsat:wrs_path': 'int', floors: 'int', taxes: 'float8', owner: 'text',
  swimming_pool: 'boolean', material: 'text', value: 'float8', foo: 'float8', bar: 'float8', x: 'float8',
  road_class: 'text', etat_vol: 'text', 'geophys:SURVEY_NAME': 'text',
};

const CHOICES: Record<string, unknown[]> = {
  city: ['Toronto', 'Frankfurt', 'Tokyo', 'New York', 'Paris'],
  cityName: ['Toronto', 'Frankfurt', 'Tokyo', 'New York', 'Paris', 'tokyo'],
  name: ['Smith', 'Smithers', 'smith', 'foo', 'foobar', 'Foo', 'bar', 'a_foo%'],
  depth: [50, 100, 100.5, 125, 150, 151],
  category: [0, 1, 2, 3, 4, 5, 6],
  'landsat:scene_id': ['LC82030282019133LGN00', 'LC82030282019133LGN01'],
  'eo:instrument': ['OLI', 'OLI_TIRS', 'TIRS', 'oli'],
  'eo:cloud_cover': [0.05, 0.1, 0.15, 0.2, 0.3],
  'landsat:wrs_row': [27, 28, 29],
  'landsat:wrs_path': [202, 203],
  floors: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  taxes: [100, 499.5, 500, 501, 1000],
  owner: ['Mike Jones', 'mike smith', 'Mike', 'Jones', 'Ann Jones', 'Bob', 'MikeMike', 'Beyoncé', 'Beyonce', 'BEYONCE', 'Somebody Else', 'SOMEBODY ELSE'],
  swimming_pool: [true, false],
  material: ['brick', 'redbrick', 'brickwall', 'wood', 'Brick'],
  value: [1, 2, 3, 5, 9.5, 10, 15, 20, 20.5, 30],
  // The arithmetic examples' operands (no 0 for foo: the oracle's 2 / foo would fail on it; the hub's is unknown).
  foo: [1, 2, 3, 4, 5, -3, 2.5, 0.5],
  bar: [0, 1, 6.1234, 12.2468],
  x: [0, 1, 2, 3],
  // CASEI and ACCENTI: Greek final sigma, German sharp s, composed and decomposed accents.
  road_class: ['Οδος', 'ΟΔΟΣ', 'οδος', 'Straße', 'STRASSE', 'strasse', 'Strasse', 'Street', 'οδός'],
  etat_vol: ['débárquér', 'debarquer', 'DEBARQUER', 'débarqué', 'Débárquér', 'de\u0301barque\u0301r'],
  'geophys:SURVEY_NAME': ['Calcutta survey', 'CALCUTTA', 'calcutta 2', 'Kolkata', 'calcuta'],
};

interface Feature {
  type: 'Feature';
  id: string;
  geometry: { type: string; coordinates: unknown } | null;
  properties: Record<string, unknown>;
}

/** Seeded features: points, small squares and a few without geometry; each property missing (10 %), null (5 %) or one of its choices. */
function features(): Feature[] {
  const rand = seededRandom(26);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const round = (value: number) => Math.round(value * 1e4) / 1e4;
  const made: Feature[] = [];
  for (let i = 0; i < 400; i++) {
    const properties: Record<string, unknown> = {};
    for (const [key, choices] of Object.entries(CHOICES)) {
      const roll = rand();
      if (roll < 0.1) continue;
      properties[key] = roll < 0.15 ? null : pick(choices);
    }
    const [x, y] = [round(rand() * 360 - 180), round(rand() * 170 - 85)];
    const size = 0.5 + round(rand() * 5);
    const shape = rand();
    const geometry = shape < 0.05 ? null
      : shape < 0.7 ? { type: 'Point', coordinates: [x, y] }
        : { type: 'Polygon', coordinates: [[[x, y], [Math.min(180, x + size), y], [Math.min(180, x + size), Math.min(90, y + size)], [x, Math.min(90, y + size)], [x, y]]] };
    made.push({ type: 'Feature', id: i === 7 ? 'fa7e1920-9107-422d-a3db-c468cbc5d6df' : `f${i}`, geometry, properties });
  }
  // clause7_07's point lies in this square; example24's triangle holds the origin.
  made.push({ type: 'Feature', id: 'near-amman', geometry: { type: 'Polygon', coordinates: [[[36, 32], [37, 32], [37, 33], [36, 33], [36, 32]]] }, properties: { floors: 3 } });
  made.push({ type: 'Feature', id: 'origin', geometry: { type: 'Point', coordinates: [1, 0] }, properties: { value: 10 } });
  // example85 is an equality of a computed double: this feature meets it (-1 * -3 * 2 + 6.1234 / 6.1234 - 2 ^ 2 = 3).
  made.push({ type: 'Feature', id: 'example85', geometry: null, properties: { value: 3, foo: -3, bar: 6.1234, x: 2 } });
  return made;
}

const FEATURES = features();
const skip = postgresUnavailable();

const itemIds = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => String(feature.id));

function assertOgcError(response: TestResponse, code: string, ...parts: string[]): void {
  assert.equal(response.status, 400, response.text);
  assert.equal(response.body.code, code, response.text);
  assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description']);
  for (const part of parts) assert.ok(String(response.body.description).includes(part), `${part} not in ${response.text}`);
}

describe('CQL2 filters on OGC items, PostGIS as the oracle', { skip }, () => {
  let oracle: TestDatabase;
  const expected = new Map<string, string[]>();

  before(async () => {
    oracle = await createTestDatabase();
    const db = new pg.Client({ connectionString: oracle.url });
    await db.connect();
    try {
      const columns = Object.entries(COLUMNS).map(([name, type]) => `"${name}" ${type}`).join(', ');
      await db.query(`CREATE TABLE oracle (id text PRIMARY KEY, geom geometry(Geometry, 4326), ${columns})`);
      const values = Object.entries(COLUMNS).map(([name, type]) => `(f -> 'properties' ->> '${name}')::${type}`).join(', ');
      await db.query(`INSERT INTO oracle SELECT f ->> 'id', CASE WHEN json_typeof(f -> 'geometry') = 'object' THEN ST_GeomFromGeoJSON(f -> 'geometry') END, ${values}
        FROM json_array_elements($1::json) f`, [JSON.stringify(FEATURES)]);
      for (const example of EXAMPLES) {
        const { rows } = await db.query<{ id: string }>(`SELECT id FROM oracle WHERE ${example.oracle} ORDER BY id`);
        expected.set(example.example, rows.map((row) => row.id));
      }
    } finally {
      await db.end();
    }
  });
  after(async () => { await oracle?.remove(); });

  test('the oracle finds some but not all features for nearly every example', () => {
    const telling = EXAMPLES.filter((example) => {
      const count = expected.get(example.example)!.length;
      return count > 0 && count < FEATURES.length;
    });
    assert.ok(telling.length >= EXAMPLES.length - 2, `only ${telling.length} of ${EXAMPLES.length} examples tell features apart`);
  });

  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      let space: string;
      const items = (query: Record<string, string>, token?: string) => call(hub, 'GET', `/ogc/collections/${space}/items?${new URLSearchParams({ limit: '10000', ...query })}`,
        token ? { headers: { authorization: `Bearer ${token}` } } : {});
      const sorted = (response: TestResponse) => {
        assert.equal(response.status, 200, response.text);
        return itemIds(response).sort();
      };

      before(async () => {
        hub = await startHub({ backend });
        space = await createSpaceWith(hub, FEATURES, { title: 'cql2 examples' });
      });
      after(async () => { await hub?.stop(); });

      test('each example in CQL2 text selects the oracle\'s features', async () => {
        for (const example of EXAMPLES) {
          const found = sorted(await items({ filter: example.text }));
          assert.deepEqual(found, expected.get(example.example), `${example.example}: ${example.text}`);
        }
      });

      test('each example in CQL2 JSON selects the oracle\'s features', async () => {
        for (const example of EXAMPLES.filter((e) => e.json !== null)) {
          const found = sorted(await items({ filter: JSON.stringify(example.json), 'filter-lang': 'cql2-json' }));
          assert.deepEqual(found, expected.get(example.example), `${example.example}: ${JSON.stringify(example.json)}`);
        }
      });

      test('a filter pages by next links like any items request, and keeps to the other parameters', async () => {
        const all: string[] = [];
        let path: string | undefined = `/ogc/collections/${space}/items?filter=${encodeURIComponent('value >= 10')}&limit=7`;
        while (path) {
          const response = await call(hub, 'GET', path);
          assert.equal(response.status, 200, response.text);
          all.push(...itemIds(response));
          const next = (response.body.links as Array<{ rel: string; href: string }>).find((link) => link.rel === 'next');
          path = next ? new URL(next.href).pathname + new URL(next.href).search : undefined;
        }
        assert.deepEqual(all.sort(), expected.get('example34'));
        const boxed = sorted(await items({ filter: 'value >= 10', bbox: '-180,-90,0,90' }));
        const west = new Set(sorted(await items({ filter: 'S_INTERSECTS(geometry, BBOX(-180,-90,0,90))' })));
        assert.deepEqual(boxed, expected.get('example34')!.filter((id) => west.has(id)));
      });

      test('timestamps, dates and intervals compare with updatedAt and createdAt, as comparisons and temporal functions', async () => {
        const times = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'cql2 times' } })).body.id as string;
        const written: Record<string, number> = {};
        for (const id of ['a', 'b', 'c']) {
          const response = await call(hub, 'PUT', `/hub/spaces/${times}/features/${id}`, { body: { type: 'Feature', geometry: null, properties: {} } });
          assert.equal(response.status, 200, response.text);
          written[id] = (response.body.properties as Record<string, { updatedAt: number }>)['@ns:com:here:xyz'].updatedAt;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
        assert.ok(written.a < written.b && written.b < written.c, JSON.stringify(written));
        const at = (id: string) => `TIMESTAMP('${new Date(written[id]).toISOString()}')`;
        const iso = (id: string) => `'${new Date(written[id]).toISOString()}'`;
        const today = new Date(written.a).toISOString().slice(0, 10);
        const found = async (filter: string) => {
          const response = await call(hub, 'GET', `/ogc/collections/${times}/items?${new URLSearchParams({ filter })}`);
          assert.equal(response.status, 200, response.text);
          return itemIds(response).sort().join(',');
        };
        const cases: Array<[string, string]> = [
          [`updatedAt > ${at('a')}`, 'b,c'],
          [`updatedAt <= ${at('b')}`, 'a,b'],
          [`updatedAt = DATE('${today}')`, 'a,b,c'],
          [`updatedAt < DATE('${today}') OR createdAt > DATE('${today}')`, ''],
          [`T_AFTER(updatedAt, ${at('a')})`, 'b,c'],
          [`T_BEFORE(updatedAt, ${at('c')})`, 'a,b'],
          [`T_AFTER(${at('b')}, updatedAt)`, 'a'],
          [`T_EQUALS(updatedAt, ${at('b')})`, 'b'],
          [`T_INTERSECTS(updatedAt, INTERVAL(${iso('a')}, ${iso('b')}))`, 'a,b'],
          [`T_INTERSECTS(updatedAt, INTERVAL('..', ${iso('a')}))`, 'a'],
          [`T_DISJOINT(updatedAt, INTERVAL(${iso('b')}, '..'))`, 'a'],
          [`T_INTERSECTS(createdAt, DATE('${today}'))`, 'a,b,c'],
        ];
        for (const [filter, ids] of cases) assert.equal(await found(filter), ids, filter);
        assertOgcError(await items({ filter: "T_DURING(updatedAt, INTERVAL('2020-01-01', '..'))" }), 'ogcInvalidFilter', 'T_DURING');
        assertOgcError(await items({ filter: "updatedAt > '2020-01-01'" }), 'ogcInvalidFilter', 'TIMESTAMP');
        assertOgcError(await items({ filter: "updatedAt > TIMESTAMP('yesterday')" }), 'ogcInvalidFilter', 'RFC 3339');
      });

      test('a parse error is a 400 naming line, column and offset, in either language', async () => {
        assertOgcError(await items({ filter: 'floors > 5 AND\n  owner LIKE' }), 'ogcFilterSyntax', 'line 2, column 13 (offset 27)');
        assertOgcError(await items({ filter: 'floors >> 5' }), 'ogcFilterSyntax', 'line 1, column 9 (offset 8)');
        assertOgcError(await items({ filter: '{"op": "=", "args": [', 'filter-lang': 'cql2-json' }), 'ogcFilterSyntax', 'offset 21');
      });

      test('filters the hub cannot answer, unknown queryables and wrong parameters are 400s', async () => {
        assertOgcError(await items({ filter: 'nosuch = 1' }), 'ogcUnknownQueryable', '"nosuch"');
        assertOgcError(await items({ filter: 'CASEI(name) = CASEI(owner)' }), 'ogcInvalidFilter', 'CASEI');
        assertOgcError(await items({ filter: 'CASEI(floors + 1) = \'a\'' }), 'ogcInvalidFilter', 'CASEI');
        assertOgcError(await items({ filter: 'UPPER(name) = \'a\'' }), 'ogcInvalidFilter', 'UPPER');
        assertOgcError(await items({ filter: 'value > ABS(floors) + 1' }), 'ogcInvalidFilter', 'ABS');
        assertOgcError(await items({ filter: 'floors > 5 OR S_INTERSECTS(geometry, POINT(1 0))' }), 'ogcInvalidFilter', 'S_INTERSECTS');
        assertOgcError(await items({ filter: 'S_WITHIN(floors, POINT(1 0))' }), 'ogcInvalidFilter', 'S_WITHIN');
        assertOgcError(await items({ filter: "name LIKE 'a\\'" }), 'ogcInvalidFilter', 'escape');
        assertOgcError(await items({ filter: '{"op":"=","args":[{"property":"floors"}]}', 'filter-lang': 'cql2-json' }), 'ogcInvalidFilter', '2 arguments');
        assertOgcError(await items({ filter: 'floors > 5', 'filter-lang': 'sql' }), 'ogcUnsupportedFilterLang');
        assertOgcError(await items({ filter: 'floors > 5', 'filter-crs': 'http://www.opengis.net/def/crs/EPSG/0/4326' }), 'ogcUnsupportedCrs', 'filter-crs');
        assertOgcError(await items({ filter: 'S_INTERSECTS(geometry, POINT(1 0))', bbox: '0,0,1,1' }), 'ogcInvalidFilter', 'bbox');
        assertOgcError(await items({ sortby: '-nosuch' }), 'ogcUnknownSortable', '"nosuch"');
        assertOgcError(await items({ filter: `${'NOT ('.repeat(1000)}floors > 5${')'.repeat(1000)}` }), 'ogcInvalidFilter', 'nest');
        // Parentheses add no level to the tree, but the parser recurses on them: deep ones are answered or refused, never a 5xx.
        const parenthesized = await items({ filter: `${'('.repeat(2500)}floors > 5${')'.repeat(2500)}` });
        assert.ok([200, 400].includes(parenthesized.status), parenthesized.text);
        const many = Array.from({ length: 1001 }, (_, i) => `id=${i}`).join(' OR ');
        assertOgcError(await items({ filter: many }), 'ogcInvalidFilter', '1000');
      });

      test('a filter reads nothing of a space the caller may not read', async () => {
        const stranger = (await issueToken(hub, { aid: `stranger-${backend}`, urm: ownerRights(`stranger-${backend}`) })).token;
        const response = await items({ filter: 'floors > 5' }, stranger);
        assert.equal(response.status, 403, response.text);
        assert.ok(!response.text.includes('"features"'));
        const unknown = await items({ filter: 'nosuch = 1' }, stranger);
        assert.equal(unknown.status, 403, 'the space is refused before its queryables are told');
      });

      test('queryables: the data\'s properties with their JSON types, and the id, geometry and times', async () => {
        const response = await call(hub, 'GET', `/ogc/collections/${space}/queryables`);
        assert.equal(response.status, 200, response.text);
        const properties = response.body.properties as Record<string, { type?: string; format?: string }>;
        assert.equal(properties.floors.type, 'number');
        assert.equal(properties.owner.type, 'string');
        assert.equal(properties.swimming_pool.type, 'boolean');
        assert.equal(properties.geometry.format, 'geometry-any');
        assert.equal(properties.updatedAt.format, 'date-time');
        assert.equal(properties.id.type, 'string');
      });

      test('GDAL ogr2ogr -where sends the filter as CQL text and gets the oracle\'s features', { skip: GDAL_MISSING ? 'ogr2ogr not found' : false }, async () => {
        const wheres: Array<[string, string]> = [
          ["floors > 5 AND owner LIKE 'Mike%'", 'example-gdal-1'],
          ['value >= 10 OR category = 2', 'example-gdal-2'],
          ["material = 'brick' AND NOT (swimming_pool = 1)", 'example-gdal-3'],
          ["NOT (floors < 5) AND (name = 'foo' OR name = 'Smith')", 'example-gdal-4'],
        ];
        const oracleSql: Record<string, string> = {
          'example-gdal-1': "floors > 5 AND owner LIKE 'Mike%'",
          'example-gdal-2': 'value >= 10 OR category = 2',
          'example-gdal-3': "material = 'brick' AND NOT swimming_pool",
          'example-gdal-4': "NOT (floors < 5) AND (name = 'foo' OR name = 'Smith')",
        };
        const db = new pg.Client({ connectionString: oracle.url });
        await db.connect();
        try {
          for (const [where, label] of wheres) {
            const { rows } = await db.query<{ id: string }>(`SELECT id FROM oracle WHERE ${oracleSql[label]} ORDER BY id`);
            const { stdout, stderr } = await run('ogr2ogr', ['-f', 'GeoJSON', '/vsistdout/', `OAPIF:${hub.url}/ogc?access_token=${hub.token}`, space, '-where', where],
              { maxBuffer: 64 << 20, env: { ...process.env, CPL_DEBUG: 'ON' } });
            const fetched = [...stderr.matchAll(/HTTP: Fetch\((.*)\)/g)].map((match) => match[1]).filter((url) => url.includes('/items'));
            // The first request reads one page unfiltered, for the layer's fields; the feature reads carry the filter.
            const reads = fetched.slice(1);
            assert.ok(reads.length > 0 && reads.every((url) => /[?&]filter=/.test(url) && url.includes('filter-lang=cql-text')), `GDAL filtered on the server: ${fetched.join('\n')}`);
            const copied = (JSON.parse(stdout) as { features: Array<{ properties: { id: string } }> }).features.map((feature) => feature.properties.id).sort();
            assert.deepEqual(copied, rows.map((row) => row.id), `${where}: ${reads[0]}`);
          }
        } finally {
          await db.end();
        }
      });
    });
  }
});
