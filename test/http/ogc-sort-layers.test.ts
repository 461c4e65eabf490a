// sortby on OGC items of virtual (group, override, merge by id) and composite spaces (issue 26): pages by next links equal a sort done here over the features the space shows, on both engines.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { seededRandom } from '../helpers/seeded-random.js';

interface Feature {
  type: 'Feature';
  id: string;
  geometry: { type: 'Point'; coordinates: [number, number] };
  properties: Record<string, unknown>;
}

/** A feature the space shows, and the layer it comes from (group duplicates stand in layer order). */
interface Shown {
  feature: Feature;
  layer: number;
}

const NUMBERS = [-12.5, -1, 0, 0.25, 1, 2, 3, 10, 1e9];
const STRINGS = ['', 'A', 'Z', 'a', 'ab', 'é', 'z', '😀', 'ﬀ'];
const ORDERS = ['n', '-n', '+s', '-s,-id', '-k,+s', 'k,-n,b', 'b,-id', '-id', 'k'];

const rand = seededRandom(2626);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
/** Ids of mixed scripts, so that their order is by UTF-8 bytes (`😀` after `é`, unlike UTF-16 order against U+FF00). */
const POOL = Array.from({ length: 60 }, (_, index) => `${['p', 'P', 'é', '😀', 'ｑ'][index % 5]}${index}`);

/** Properties drawn at random, each missing (10 %), null (5 %) or a value; `k` has few values, so ties fall to later keys. */
function properties(src: string): Record<string, unknown> {
  const made: Record<string, unknown> = { src };
  const choose = (key: string, values: readonly unknown[]) => {
    const roll = rand();
    if (roll >= 0.1) made[key] = roll < 0.15 ? null : pick(values);
  };
  choose('n', NUMBERS);
  choose('s', STRINGS);
  choose('k', [1, 2, 3]);
  choose('b', [true, false]);
  return made;
}

const feature = (id: string, props: Record<string, unknown>): Feature => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [rand() * 10, rand() * 10] }, properties: props });

/** `count` different ids of the pool, in random order. */
function idsFrom(count: number): string[] {
  const ids = [...POOL];
  for (let index = ids.length - 1; index > 0; index--) {
    const other = Math.floor(rand() * (index + 1));
    [ids[index], ids[other]] = [ids[other], ids[index]];
  }
  return ids.slice(0, count);
}

const A = idsFrom(40).map((id) => feature(id, properties('A')));
/** B holds ids of A, half of them with A's very keys (a group shows both, equal on every key), and ids of its own. */
const B = idsFrom(30).map((id) => {
  const inA = A.find((held) => held.id === id);
  return feature(id, inA && rand() < 0.5 ? { ...inA.properties, src: 'B' } : properties('B'));
});
/** The composite's own features over A: versions of A's ids and new ids. */
const C = [...A.slice(0, 8).map((held) => feature(held.id, properties('C'))), ...POOL.filter((id) => !A.some((held) => held.id === id)).slice(0, 6).map((id) => feature(id, properties('C')))];
/** Deleted through the composite: A's features it does not hold, and two it holds (whose versions a tombstone then replaces). */
const DELETED = [...A.slice(10, 16).map((held) => held.id), A[0].id, A[1].id];

/** The rank, number and string of a JSON value, as docs/ogc-filtering.md "Sorting" says it compares. */
function sortValue(value: unknown): [number, number, string] {
  if (typeof value === 'number') return [0, value, ''];
  if (typeof value === 'string') return [1, 0, value];
  if (typeof value === 'boolean') return [2, value ? 1 : 0, ''];
  return [3, 0, ''];
}

/** The order `sortby` names, the id last (ascending unless named), ties between layers by layer. */
function sorted(shown: readonly Shown[], sortby: string): Shown[] {
  const terms = sortby.split(',').map((term) => ({ name: term.replace(/^[+-]/, ''), descending: term.startsWith('-') }));
  if (!terms.some((term) => term.name === 'id')) terms.push({ name: 'id', descending: false });
  const valueOf = (item: Shown, name: string) => (name === 'id' ? sortValue(item.feature.id) : sortValue(item.feature.properties[name]));
  return [...shown].sort((a, b) => {
    for (const term of terms) {
      const [x, y] = [valueOf(a, term.name), valueOf(b, term.name)];
      const order = Math.sign(x[0] - y[0]) || Math.sign(x[1] - y[1]) || Buffer.compare(Buffer.from(x[2]), Buffer.from(y[2]));
      if (order !== 0) return term.descending ? -order : order;
    }
    return a.layer - b.layer;
  });
}

/** Override: each id once, from the last layer holding it; `deleted` ids are gone. */
function overridden(layers: ReadonlyArray<readonly Feature[]>, deleted: readonly string[] = []): Shown[] {
  const byId = new Map<string, Shown>();
  layers.forEach((features, layer) => features.forEach((held) => byId.set(held.id, { feature: held, layer })));
  return [...byId.values()].filter((item) => !deleted.includes(item.feature.id));
}

/** A composite space over C (two levels): versions of ids shown from A and from C, one C deleted back, and deletions. */
const D = [feature(A[2].id, properties('D')), feature(C[10].id, properties('D')), feature(A[10].id, properties('D')), feature(A[20].id, properties('D'))];
const DELETED_D = [A[3].id, C[11].id, A[20].id];

const GROUP = [...A.map((held) => ({ feature: held, layer: 0 })), ...B.map((held) => ({ feature: held, layer: 1 }))];
const OVERRIDE = overridden([A, B]);
const COMPOSITE = overridden([A, C], DELETED);
/** Each layer's deletions hide what the layers below show (a tombstone replaces even the layer's own version). */
const TWO_LEVELS = overridden([A, C.filter((held) => !DELETED.includes(held.id)), D.filter((held) => !DELETED_D.includes(held.id))])
  .filter((item) => !(item.layer < 1 && DELETED.includes(item.feature.id)) && !(item.layer < 2 && DELETED_D.includes(item.feature.id)));

const label = (item: Shown) => `${item.feature.id}/${String(item.feature.properties.src)}`;
const labelsOf = (response: TestResponse): string[] => (response.body.features ?? []).map((item) => `${String(item.id)}/${String(item.properties?.src)}`);
const linkOf = (response: TestResponse, rel: string) => (response.body.links as Array<{ rel: string; href: string }>).find((link) => link.rel === rel)?.href;
const virtual = (operation: string, upstreams: string[]) => ({ storage: { id: 'virtualspace', params: { virtualspace: { [operation]: upstreams } } } });

for (const backend of BACKENDS) {
  describe(`sortby through virtual and composite spaces (${backend})`, () => {
    let hub: HubProcess;
    const spaces: Record<string, string> = {};

    const put = async (space: string, features: Feature[]) => {
      const response = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
      assert.equal(response.status, 200, response.text);
    };

    /** Every page by next links: the features as `id/src` and as read, and how many pages it took. */
    async function walk(space: string, query: Record<string, string>): Promise<{ labels: string[]; features: FeatureJson[]; pages: number; limits: boolean }> {
      const labels: string[] = [];
      const features: FeatureJson[] = [];
      let pages = 0;
      let limits = true;
      let path: string | undefined = `/ogc/collections/${space}/items?${new URLSearchParams(query)}`;
      while (path && pages < 200) {
        const response = await call(hub, 'GET', path);
        assert.equal(response.status, 200, response.text);
        const found = labelsOf(response);
        labels.push(...found);
        features.push(...(response.body.features ?? []));
        pages++;
        const next = linkOf(response, 'next');
        if (found.length > Number(query.limit) || (next !== undefined && found.length !== Number(query.limit))) limits = false;
        path = next ? new URL(next).pathname + new URL(next).search : undefined;
      }
      return { labels, features, pages, limits };
    }

    before(async () => {
      hub = await startHub({ backend });
      const a = await createSpace(hub, { title: 'A' });
      const b = await createSpace(hub, { title: 'B' });
      await put(a, A);
      await put(b, B);
      const c = await createSpace(hub, { title: 'composite', extends: { spaceId: a } });
      await put(c, C);
      for (const id of DELETED) assert.equal((await call(hub, 'DELETE', `/hub/spaces/${c}/features/${encodeURIComponent(id)}`)).status, 204);
      spaces.group = await createSpace(hub, virtual('group', [a, b]));
      spaces.override = await createSpace(hub, virtual('override', [a, b]));
      spaces.composite = c;
      const d = await createSpace(hub, { title: 'composite of a composite', extends: { spaceId: c } });
      await put(d, D);
      for (const id of DELETED_D) assert.equal((await call(hub, 'DELETE', `/hub/spaces/${d}/features/${encodeURIComponent(id)}`)).status, 204);
      spaces.twoLevels = d;
      spaces.merge = await createSpace(hub, virtual('merge', [a, b]));
    });
    after(async () => { await hub?.stop(); });

    const EXPECTED: Record<string, Shown[]> = { group: GROUP, override: OVERRIDE, composite: COMPOSITE, twoLevels: TWO_LEVELS };

    test('the model of what each space shows is what its unsorted read shows', async () => {
      for (const [name, shown] of Object.entries(EXPECTED)) {
        const response = await call(hub, 'GET', `/hub/spaces/${spaces[name]}/iterate?limit=1000`);
        assert.equal(response.status, 200, response.text);
        const labels = (response.body.features ?? []).map((item) => `${String(item.id)}/${String(item.properties?.src)}`);
        assert.deepEqual(labels.sort(), shown.map(label).sort(), name);
      }
    });

    for (const name of ['group', 'override', 'composite', 'twoLevels']) {
      test(`${name}: paging by next links gives the sort of the shown features, under each order`, async () => {
        for (const sortby of ORDERS) {
          const { labels, pages, limits } = await walk(spaces[name], { sortby, limit: '6' });
          assert.deepEqual(labels, sorted(EXPECTED[name], sortby).map(label), `${name} sortby=${sortby}`);
          assert.ok(limits, `${name} sortby=${sortby}: every page but the last holds the limit`);
          assert.ok(pages >= Math.ceil(EXPECTED[name].length / 6), `${name} sortby=${sortby}: ${pages} pages`);
        }
      });
    }

    test('group: a page of one resumes between duplicates equal on every key, in layer order', async () => {
      const ties = GROUP.filter((item) => item.layer === 1 && A.some((held) => held.id === item.feature.id && JSON.stringify({ ...held.properties, src: 'B' }) === JSON.stringify(item.feature.properties)));
      assert.ok(ties.length >= 3, `${ties.length} duplicates equal on every key`);
      for (const sortby of ['k', '-s,-id']) {
        const { labels } = await walk(spaces.group, { sortby, limit: '1' });
        assert.deepEqual(labels, sorted(GROUP, sortby).map(label), `sortby=${sortby}`);
      }
    });

    test('sorting combines with a CQL2 filter: the shown version must match (a composite\'s version hides a matching base)', async () => {
      for (const name of ['group', 'override', 'composite']) {
        const { labels } = await walk(spaces[name], { sortby: '-n', filter: 'k > 1', limit: '4' });
        const matching = EXPECTED[name].filter((item) => typeof item.feature.properties.k === 'number' && item.feature.properties.k > 1);
        assert.deepEqual(labels, sorted(matching, '-n').map(label), name);
      }
    });

    test('a composite space at a version sorts its own layer at that version over its base at HEAD, and the next link keeps it', async () => {
      const base = await createSpace(hub, { title: 'base' });
      const point = (id: string, n: number): Feature => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 1] }, properties: { n, src: 'x' } });
      await put(base, [point('z1', 5), point('z2', 1), point('z3', 3)]);
      const composite = await createSpace(hub, { title: 'versioned composite', versionsToKeep: 10, extends: { spaceId: base } });
      await put(composite, [point('z1', 0)]);
      await put(composite, [point('z2', 9)]);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${composite}/features/z3`)).status, 204);
      const ids = async (query: string) => (await walk(composite, Object.fromEntries(new URLSearchParams(query)))).labels.map((item) => item.split('/')[0]).join(',');
      assert.equal(await ids('sortby=n&limit=10'), 'z1,z2');
      assert.equal(await ids('sortby=n&version=0&limit=10'), 'z1,z2,z3');
      assert.equal(await ids('sortby=-n&version=0&limit=1'), 'z3,z2,z1');
      assert.equal(await ids('sortby=-n&version=1&limit=2'), 'z2,z3,z1');
    });

    test('a forged handle naming any layer reads on from that position (the caller chooses where to start, nothing more)', async () => {
      const handleOf = (position: unknown) => {
        const payload = Buffer.from(JSON.stringify(['+k', position])).toString('base64url');
        return `${payload}.${createHash('sha256').update(payload).digest('base64url').slice(0, 16)}`;
      };
      const expected = sorted(GROUP, 'k');
      const at = expected.findIndex((item, index) => index > 0 && item.feature.id === expected[index - 1].feature.id);
      assert.ok(at > 0, 'a duplicate equal on every key');
      const { id } = expected[at].feature;
      const k = expected[at].feature.properties.k;
      const key = typeof k === 'number' ? [0, k, ''] : [3, 0, ''];
      for (const [layer, from] of [[0, at], [-1, at - 1], [0.5, at], [1, at + 1], [1e300, at + 1]] as const) {
        const { labels } = await walk(spaces.group, { sortby: 'k', limit: '50', handle: handleOf([key, [1, layer, id]]) });
        assert.deepEqual(labels, expected.slice(from).map(label), `layer ${layer}`);
      }
      const response = await call(hub, 'GET', `/ogc/collections/${spaces.group}/items?sortby=k&handle=${handleOf([[9, 1e308, 'x'], [0, -1e308, '😀']])}`);
      assert.equal(response.status, 400, response.text);
    });

    /** Merge: each id of A and B once; its `src` is B's where B holds it (later upstreams win). */
    const MERGED = [...new Set([...A, ...B].map((held) => held.id))];
    const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    /** The merge's features by id as its unsorted items read shows them. */
    async function unsortedMerge(space: string): Promise<Map<string, FeatureJson>> {
      const response = await call(hub, 'GET', `/ogc/collections/${space}/items?limit=1000`);
      assert.equal(response.status, 200, response.text);
      return new Map((response.body.features ?? []).map((item) => [item.id, item]));
    }

    test('merge: sortby=id and -id page by next links through each feature once, as the unsorted read merges it', async () => {
      const shown = await unsortedMerge(spaces.merge);
      assert.deepEqual([...shown.keys()].sort(byUtf8), [...MERGED].sort(byUtf8), 'the unsorted read shows each id once');
      const mixed = shown.get(B.find((held) => A.some((other) => other.id === held.id))?.id ?? '');
      assert.equal(mixed?.properties.src, 'B', 'a feature of both layers is merged, the later layer winning');
      for (const [sortby, limit] of [['id', '6'], ['-id', '6'], ['id', '1'], ['+id,-n', '7'], ['-id', '100']]) {
        const { features, pages, limits } = await walk(spaces.merge, { sortby, limit });
        const ids = [...MERGED].sort(byUtf8);
        if (sortby.startsWith('-')) ids.reverse();
        assert.deepEqual(features.map((item) => item.id), ids, `sortby=${sortby} limit=${limit}`);
        assert.deepEqual(features, ids.map((id) => shown.get(id)), `sortby=${sortby}: the merged features`);
        assert.ok(limits, `sortby=${sortby}: every page but the last holds the limit`);
        assert.equal(pages, Math.floor(ids.length / Number(limit)) + 1, `sortby=${sortby} limit=${limit}`);
      }
    });

    test('merge: a filter selects a feature when one of its versions matches, as the unsorted read does', async () => {
      const matches = (held: Feature) => typeof held.properties.k === 'number' && held.properties.k > 1;
      const expected = MERGED.filter((id) => [...A, ...B].some((held) => held.id === id && matches(held))).sort(byUtf8).reverse();
      const { features } = await walk(spaces.merge, { sortby: '-id', filter: 'k > 1', limit: '4' });
      assert.deepEqual(features.map((item) => item.id), expected);
      const unsorted = await call(hub, 'GET', `/ogc/collections/${spaces.merge}/items?filter=${encodeURIComponent('k > 1')}&limit=1000`);
      assert.deepEqual((unsorted.body.features ?? []).map((item) => item.id).sort(byUtf8).reverse(), expected, 'the unsorted read agrees');
    });

    test('merge: writes between pages neither repeat nor skip what stays after the position (keyset)', async () => {
      const first = await createSpace(hub, { title: 'merge keyset A' });
      const second = await createSpace(hub, { title: 'merge keyset B' });
      const point = (id: string, n: number): Feature => ({ type: 'Feature', id, geometry: { type: 'Point', coordinates: [1, 1] }, properties: { n, src: 'x' } });
      await put(first, ['b1', 'b3', 'b5', 'b7'].map((id, n) => point(id, n)));
      await put(second, ['b2', 'b3', 'b6', 'b8'].map((id, n) => point(id, n)));
      const merge = await createSpace(hub, virtual('merge', [first, second]));
      const page = await call(hub, 'GET', `/ogc/collections/${merge}/items?sortby=id&limit=3`);
      assert.deepEqual((page.body.features ?? []).map((item) => item.id), ['b1', 'b2', 'b3']);
      // Before the position (not shown any more on the pages to come), at it in the other layer, and after it.
      await put(second, [point('b0', 0), point('b1', 9), point('b4', 0)]);
      await call(hub, 'DELETE', `/hub/spaces/${first}/features/b5`);
      const next = new URL(linkOf(page, 'next')!);
      const rest = await walk(merge, Object.fromEntries(next.searchParams));
      assert.deepEqual(rest.features.map((item) => item.id), ['b4', 'b6', 'b7', 'b8']);
    });

    test('merge: any other key is refused, naming why; a handle of another sort is refused', async () => {
      const refused = async (path: string, code: string, part: string) => {
        const response = await call(hub, 'GET', path);
        assert.equal(response.status, 400, response.text);
        assert.deepEqual(Object.keys(response.body).sort(), ['code', 'description']);
        assert.equal(response.body.code, code, response.text);
        assert.ok(String(response.body.description).includes(part), `${part} not in ${response.text}`);
      };
      await refused(`/ogc/collections/${spaces.merge}/items?sortby=n`, 'ogcInvalidSortby', 'sorts by id alone');
      await refused(`/ogc/collections/${spaces.merge}/items?sortby=-n,id`, 'ogcInvalidSortby', 'several versions');
      const first = await call(hub, 'GET', `/ogc/collections/${spaces.group}/items?sortby=n&limit=2`);
      const handle = new URL(linkOf(first, 'next')!).searchParams.get('handle')!;
      await refused(`/ogc/collections/${spaces.group}/items?sortby=-n&limit=2&handle=${handle}`, 'ogcInvalidSortHandle', '-n');
      const merged = await call(hub, 'GET', `/ogc/collections/${spaces.merge}/items?sortby=id&limit=2`);
      const mergeHandle = new URL(linkOf(merged, 'next')!).searchParams.get('handle')!;
      await refused(`/ogc/collections/${spaces.merge}/items?sortby=-id&limit=2&handle=${mergeHandle}`, 'ogcInvalidSortHandle', '-id');
    });
  });
}
