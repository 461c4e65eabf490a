// sortby on OGC items (issue 26): paged by next links under several orders, each page's ids exactly PostGIS's ORDER BY over a plain table of the same features, on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { call, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, postgresUnavailable, type TestDatabase } from '../helpers/postgres-cluster.js';
import { seededRandom } from '../helpers/seeded-random.js';

interface Feature {
  type: 'Feature';
  id: string;
  geometry: { type: 'Point'; coordinates: [number, number] } | null;
  properties: Record<string, unknown>;
}

const NUMBERS = [-12.5, -1, 0, 0.25, 1, 2, 2, 3, 10, 10.75, 1e9, 12345678];
const STRINGS = ['', 'A', 'Z', 'a', 'ab', 'b', 'é', 'z', 'ä', '😀', 'ﬀ', 'a b'];
/** Values of the property `mixed`: every JSON type, compared by type rank, then number, then string. */
const MIXED = [3, -2, 'x', 'X', '', true, false, null, { a: 1 }, [1], 0];

/** Seeded features: each property missing (10 %), null (5 %) or a value; `k` has few values, so ties fall to the next key. */
function features(): Feature[] {
  const rand = seededRandom(2608);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const made: Feature[] = [];
  const ids = new Set<string>();
  while (made.length < 150) {
    const id = `${pick(['p', 'P', 'q', 'é', ''])}${Math.floor(rand() * 1000)}`;
    if (ids.has(id) || id === '') continue;
    ids.add(id);
    const properties: Record<string, unknown> = {};
    const choose = (key: string, values: readonly unknown[]) => {
      const roll = rand();
      if (roll >= 0.1) properties[key] = roll < 0.15 ? null : pick(values);
    };
    choose('n', NUMBERS);
    choose('s', STRINGS);
    choose('b', [true, false]);
    choose('k', [1, 2, 3]);
    choose('mixed', MIXED);
    const geometry = rand() < 0.05 ? null : { type: 'Point' as const, coordinates: [Math.round(rand() * 3600 - 1800) / 10, Math.round(rand() * 1700 - 850) / 10] as [number, number] };
    made.push({ type: 'Feature', id, geometry, properties });
  }
  return made;
}

const FEATURES = features();
const skip = postgresUnavailable();

const itemIds = (response: TestResponse): string[] => (response.body.features ?? []).map((feature) => String(feature.id));
const linkOf = (response: TestResponse, rel: string) => (response.body.links as Array<{ rel: string; href: string }>).find((link) => link.rel === rel)?.href;

/** Orders as `sortby` gives them and as the oracle's ORDER BY says them (PostgreSQL: ascending nulls last, descending nulls first). */
const ORDERS: Array<[string, string]> = [
  ['n', 'n, id'],
  ['-n', 'n DESC, id'],
  ['+s', 's, id'],
  ['-s,-id', 's DESC, id DESC'],
  ['-k,+s', 'k DESC, s, id'],
  ['k,-n,b', 'k, n DESC, b, id'],
  ['b,-id', 'b, id DESC'],
  ['-id', 'id DESC'],
];

/** The rank, number and string of a JSON value, as docs/ogc-filtering.md "Sorting" says it compares. */
function sortValue(value: unknown): [number, number, string] {
  if (typeof value === 'number') return [0, value, ''];
  if (typeof value === 'string') return [1, 0, value];
  if (typeof value === 'boolean') return [2, value ? 1 : 0, ''];
  return [3, 0, ''];
}

function compareMixed(a: Feature, b: Feature): number {
  const [x, y] = [sortValue(a.properties.mixed), sortValue(b.properties.mixed)];
  return x[0] - y[0] || x[1] - y[1] || Buffer.compare(Buffer.from(x[2]), Buffer.from(y[2])) || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
}

describe('sortby on OGC items, PostGIS as the oracle', { skip }, () => {
  let oracle: TestDatabase;
  const expected = new Map<string, string[]>();
  const FILTERED = 'k >= 2';
  const BOX = '-100,-60,120,70';

  before(async () => {
    oracle = await createTestDatabase();
    const db = new pg.Client({ connectionString: oracle.url });
    await db.connect();
    try {
      await db.query('CREATE TABLE oracle (id text COLLATE "C" PRIMARY KEY, geom geometry(Point, 4326), n float8, s text COLLATE "C", b boolean, k int)');
      await db.query(`INSERT INTO oracle SELECT f ->> 'id', CASE WHEN json_typeof(f -> 'geometry') = 'object' THEN ST_GeomFromGeoJSON(f -> 'geometry') END,
          (f -> 'properties' ->> 'n')::float8, f -> 'properties' ->> 's', (f -> 'properties' ->> 'b')::boolean, (f -> 'properties' ->> 'k')::int
        FROM json_array_elements($1::json) f`, [JSON.stringify(FEATURES)]);
      for (const [sortby, orderBy] of ORDERS) {
        expected.set(sortby, (await db.query<{ id: string }>(`SELECT id FROM oracle ORDER BY ${orderBy}`)).rows.map((row) => row.id));
      }
      const [west, south, east, north] = BOX.split(',').map(Number);
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM oracle WHERE k >= 2 AND ST_Intersects(geom, ST_MakeEnvelope($1, $2, $3, $4, 4326)) ORDER BY n DESC, s, id`, [west, south, east, north]);
      expected.set('filtered', rows.map((row) => row.id));
    } finally {
      await db.end();
    }
  });
  after(async () => { await oracle?.remove(); });

  test('the orders differ from one another and from insertion order', () => {
    const orders = [...expected.values()].map((ids) => ids.join(','));
    assert.equal(new Set(orders).size, orders.length);
    assert.ok(!orders.includes(FEATURES.map((feature) => feature.id).join(',')));
  });

  for (const backend of BACKENDS) {
    describe(backend, () => {
      let hub: HubProcess;
      let space: string;

      /** Every page of the request by its next links: the ids in order, and how many pages it took. */
      async function walk(query: Record<string, string>): Promise<{ ids: string[]; pages: number }> {
        const ids: string[] = [];
        let pages = 0;
        let path: string | undefined = `/ogc/collections/${space}/items?${new URLSearchParams(query)}`;
        while (path) {
          const response = await call(hub, 'GET', path);
          assert.equal(response.status, 200, response.text);
          ids.push(...itemIds(response));
          pages++;
          const next = linkOf(response, 'next');
          path = next ? new URL(next).pathname + new URL(next).search : undefined;
        }
        return { ids, pages };
      }

      before(async () => {
        hub = await startHub({ backend });
        space = await createSpaceWith(hub, FEATURES, { title: 'sorted' });
      });
      after(async () => { await hub?.stop(); });

      test('paging by next links with a small limit gives exactly the oracle\'s ORDER BY, under each order', async () => {
        for (const [sortby] of ORDERS) {
          const { ids, pages } = await walk({ sortby, limit: '7' });
          assert.deepEqual(ids, expected.get(sortby), `sortby=${sortby}`);
          assert.ok(pages >= 150 / 7, `sortby=${sortby}: ${pages} pages`);
        }
        // One page of everything answers the same order.
        const whole = await call(hub, 'GET', `/ogc/collections/${space}/items?sortby=-n&limit=1000`);
        assert.deepEqual(itemIds(whole), expected.get('-n'));
      });

      test('sorting combines with a CQL2 filter and bbox, and the next links keep them', async () => {
        const { ids } = await walk({ sortby: '-n,s', filter: FILTERED, bbox: BOX, limit: '4' });
        assert.ok(expected.get('filtered')!.length > 10);
        assert.deepEqual(ids, expected.get('filtered'));
      });

      test('values of every JSON type sort by type (numbers, strings, booleans, then null, missing, objects and arrays), the id breaking ties', async () => {
        const ascending = [...FEATURES].sort(compareMixed).map((feature) => feature.id);
        assert.deepEqual((await walk({ sortby: 'mixed', limit: '9' })).ids, ascending);
        // Descending reverses the values; equal values keep the id ascending.
        const byValueDown = [...FEATURES].sort((a, b) => {
          const [x, y] = [sortValue(a.properties.mixed), sortValue(b.properties.mixed)];
          return y[0] - x[0] || y[1] - x[1] || Buffer.compare(Buffer.from(y[2]), Buffer.from(x[2])) || Buffer.compare(Buffer.from(a.id), Buffer.from(b.id));
        }).map((feature) => feature.id);
        assert.deepEqual((await walk({ sortby: '-mixed', limit: '9' })).ids, byValueDown);
      });

      test('updatedAt sorts by the time of the last write, and a read at a version sorts that version', async () => {
        const versioned = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'sorted versions', versionsToKeep: 10 } })).body.id as string;
        const put = (body: unknown) => call(hub, 'PUT', `/hub/spaces/${versioned}/features`, { body });
        const feature = (id: string, n: number) => ({ type: 'Feature', id, geometry: null, properties: { n } });
        assert.equal((await put({ type: 'FeatureCollection', features: [feature('a', 1), feature('b', 2), feature('c', 3)] })).status, 200);
        assert.equal((await put({ type: 'FeatureCollection', features: [feature('a', 10)] })).status, 200);
        const sortedIds = async (query: string) => {
          const response = await call(hub, 'GET', `/ogc/collections/${versioned}/items?${query}`);
          assert.equal(response.status, 200, response.text);
          return itemIds(response).join(',');
        };
        assert.equal(await sortedIds('sortby=n'), 'b,c,a');
        assert.equal(await sortedIds('sortby=n&version=0'), 'a,b,c');
        assert.equal(await sortedIds('sortby=-n&version=0&limit=2'), 'c,b');
        assert.equal(await sortedIds('sortby=-updatedAt,id'), 'a,b,c');
        const page = await call(hub, 'GET', `/ogc/collections/${versioned}/items?sortby=-n&version=0&limit=2`);
        const next = new URL(linkOf(page, 'next')!);
        assert.equal(next.searchParams.get('version'), '0');
        assert.deepEqual(itemIds(await call(hub, 'GET', next.pathname + next.search)), ['a']);
      });

      test('the sortables, the conformance class, and clear 400s for what cannot be sorted or resumed', async () => {
        const sortables = await call(hub, 'GET', `/ogc/collections/${space}/sortables`);
        assert.equal(sortables.status, 200, sortables.text);
        const names = Object.keys(sortables.body.properties as object);
        for (const name of ['n', 's', 'b', 'k', 'mixed', 'id', 'updatedAt', 'createdAt']) assert.ok(names.includes(name), `${name} in ${names.join(',')}`);
        assert.ok(!names.includes('geometry'));
        const conformance = await call(hub, 'GET', '/ogc/conformance');
        assert.ok((conformance.body.conformsTo as string[]).includes('http://www.opengis.net/spec/ogcapi-features-8/1.0/conf/sorting'));

        const error = async (query: Record<string, string>, code: string, part: string) => {
          const response = await call(hub, 'GET', `/ogc/collections/${space}/items?${new URLSearchParams(query)}`);
          assert.equal(response.status, 400, response.text);
          assert.equal(response.body.code, code, response.text);
          assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description']);
          assert.ok(String(response.body.description).includes(part), `${part} not in ${response.text}`);
        };
        await error({ sortby: 'nosuch' }, 'ogcUnknownSortable', '"nosuch"');
        await error({ sortby: 'geometry' }, 'ogcUnknownSortable', '"geometry"');
        await error({ sortby: 'n,,s' }, 'ogcInvalidSortby', 'name');
        await error({ sortby: 'n,-n' }, 'ogcInvalidSortby', 'once');
        await error({ sortby: 'a,b,c,d,e,f,g,h,i' }, 'ogcInvalidSortby', '8');

        // A merge space's items are not sorted (docs/ogc-filtering.md; other layered spaces: ogc-sort-layers.test.ts): a 400, not an order of its own.
        const merge = (await call(hub, 'POST', '/hub/spaces', { body: { title: 'merge', storage: { id: 'virtualspace', params: { virtualspace: { merge: [space] } } } } })).body.id as string;
        const merged = await call(hub, 'GET', `/ogc/collections/${merge}/items?sortby=n`);
        assert.equal(merged.status, 400, merged.text);
        assert.equal(merged.body.code, 'ogcInvalidSortby');
        assert.ok(String(merged.body.description).includes('merges'), merged.text);

        const first = await call(hub, 'GET', `/ogc/collections/${space}/items?sortby=-n&limit=5`);
        const handle = new URL(linkOf(first, 'next')!).searchParams.get('handle')!;
        const [payload, sum] = handle.split('.');
        const edited = Buffer.from(Buffer.from(payload, 'base64url').toString().replace(/"[^"]*"\]\]\]$/, '"zzz"]]]')).toString('base64url');
        assert.notEqual(edited, payload);
        for (const bad of [`${edited}.${sum}`, `${payload}.AAAAAAAAAAAAAAAA`, 'garbage', '12', `${payload}`, '.']) {
          await error({ sortby: '-n', limit: '5', handle: bad }, 'ogcInvalidSortHandle', '-n');
        }
        // A handle of one order does not resume another.
        await error({ sortby: 'n', limit: '5', handle }, 'ogcInvalidSortHandle', '+n');
        assert.equal((await call(hub, 'GET', `/ogc/collections/${space}/items?sortby=-n&limit=5&handle=${encodeURIComponent(handle)}`)).status, 200);
      });
    });
  }
});
