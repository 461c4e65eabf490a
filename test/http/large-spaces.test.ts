// Black-box tests of large spaces: statistics estimated from a sample above HUB_STATISTICS_EXACT_LIMIT, and deletes by tag larger than one chunk.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const NS = '@ns:com:here:xyz';
/** Spaces above this many features get sampled statistics in these tests. */
const EXACT_LIMIT = 1000;

interface Item<T> { value: T; estimated: boolean }
interface Statistics {
  count: Item<number>;
  dataSize: Item<number>;
  bbox: Item<number[]>;
  geometryTypes: Item<string[]>;
  tags: Item<Array<{ key: string; count: number }>>;
  properties: Item<Array<{ key: string; count: number; datatype?: string }>>;
}

/** Feature `i` of a big space: mostly points, every 7th a line, every 50th a polygon, every 100th without geometry. */
function bigFeature(i: number): object {
  const x = (i % 360) - 180 + 0.5;
  const y = (i % 170) - 85 + 0.5;
  const geometry = i % 100 === 0 ? null
    : i % 50 === 0 ? { type: 'Polygon', coordinates: [[[x, y], [x + 0.1, y], [x + 0.1, y + 0.1], [x, y]]] }
      : i % 7 === 0 ? { type: 'LineString', coordinates: [[x, y], [x + 0.2, y + 0.2]] }
        : { type: 'Point', coordinates: [x, y] };
  const tags = ['all', `q${i % 4}`, ...(i % 10 === 0 ? ['tenth'] : [])];
  return {
    type: 'Feature', id: `f${i}`, geometry,
    properties: { name: `feature ${i}`, n: i, ...(i % 2 === 0 ? { even: true } : {}), [NS]: { tags } },
  };
}

const within = (actual: number | undefined, expected: number, tolerance: number, what: string) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) <= expected * tolerance, `${what}: ${actual} is not within ${tolerance * 100}% of ${expected}`);

for (const backend of BACKENDS) {
  describe(`large spaces (${backend})`, () => {
    let hub: HubProcess;

    before(async () => {
      hub = await startHub({ backend, env: { HUB_STATISTICS_EXACT_LIMIT: String(EXACT_LIMIT) } });
    });
    after(async () => { await hub.stop(); });

    const statisticsOf = async (space: string): Promise<Statistics> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.equal(response.status, 200, response.text);
      return response.body as unknown as Statistics;
    };

    /** A new space with features 0 to `total - 1`, written in PUTs of 5,000. */
    async function spaceWith(total: number, feature: (i: number) => object): Promise<string> {
      const space = await createSpace(hub);
      for (let start = 0; start < total; start += 5000) {
        const features = Array.from({ length: Math.min(5000, total - start) }, (_, i) => feature(start + i));
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
          body: { type: 'FeatureCollection', features }, headers: { accept: 'application/x-empty' },
        });
        assert.equal(put.status, 204, put.text);
      }
      return space;
    }

    const countOf = async (space: string): Promise<number> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(response.status, 200, response.text);
      return response.body.count as number;
    };

    const idsOf = async (space: string): Promise<string[]> => {
      const response = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=100000`);
      assert.equal(response.status, 200, response.text);
      return (response.body.features ?? []).map((feature: FeatureJson) => feature.id);
    };

    const deleteByTags = async (space: string, tags: string): Promise<number> => {
      const response = await call(hub, 'DELETE', `/hub/spaces/${space}/features?tags=${tags}`, { headers: { accept: 'application/json' } });
      assert.equal(response.status, 200, response.text);
      return response.body.count as number;
    };

    describe('statistics above the exact limit', () => {
      const TOTAL = 20_000;
      let space: string;
      let stats: Statistics;

      before(async () => {
        space = await spaceWith(TOTAL, bigFeature);
        stats = await statisticsOf(space);
      });

      test('count comes from the counters and is exact', () => {
        assert.deepEqual(stats.count, { value: TOTAL, estimated: false });
        assert.ok(stats.dataSize.value > 0);
      });

      test('the sampled members say they are estimated', () => {
        for (const member of ['bbox', 'geometryTypes', 'tags', 'properties'] as const) assert.equal(stats[member].estimated, true, member);
      });

      test('geometryTypes hold the types the sample meets: all three here', () => {
        assert.deepEqual([...stats.geometryTypes.value].sort(), ['LineString', 'Point', 'Polygon']);
      });

      test('the bbox lies within the true extent and close to it', () => {
        const positions = Array.from({ length: TOTAL }, (_, i) => bigFeature(i) as FeatureJson)
          .flatMap((feature) => (feature.geometry ? [feature.geometry.coordinates].flat(3) as number[] : []));
        const xs = positions.filter((_, index) => index % 2 === 0);
        const ys = positions.filter((_, index) => index % 2 === 1);
        const extent = [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
        const bbox = stats.bbox.value;
        assert.equal(bbox.length, 4);
        // A spatial index may round its boxes outwards (PostGIS keeps them as float4).
        assert.ok(bbox[0] >= extent[0] - 1e-4 && bbox[1] >= extent[1] - 1e-4 && bbox[2] <= extent[2] + 1e-4 && bbox[3] <= extent[3] + 1e-4,
          `${bbox} within ${extent}`);
        bbox.forEach((value, index) => assert.ok(Math.abs(value - extent[index]) < 2, `${bbox} close to ${extent}`));
      });

      test('tag counts are scaled to the whole space', () => {
        const tags = new Map(stats.tags.value.map((tag) => [tag.key, tag.count]));
        assert.deepEqual([...tags.keys()].sort(), ['all', 'q0', 'q1', 'q2', 'q3', 'tenth']);
        assert.equal(tags.get('all'), TOTAL);
        for (const quarter of ['q0', 'q1', 'q2', 'q3']) within(tags.get(quarter), TOTAL / 4, 0.1, quarter);
        within(tags.get('tenth'), TOTAL / 10, 0.15, 'tenth');
        const counts = stats.tags.value.map((tag) => tag.count);
        assert.deepEqual(counts, [...counts].sort((a, b) => b - a));
      });

      test('property counts are scaled to the whole space', () => {
        const properties = new Map(stats.properties.value.map((property) => [property.key, property]));
        assert.deepEqual([...properties.keys()].sort(), ['even', 'n', 'name']);
        assert.equal(properties.get('name')?.count, TOTAL);
        assert.equal(properties.get('name')?.datatype, 'string');
        assert.equal(properties.get('n')?.datatype, 'number');
        within(properties.get('even')?.count, TOTAL / 2, 0.1, 'even');
        assert.equal(properties.get('even')?.datatype, 'boolean');
      });

      test('repeated calls answer alike', async () => {
        assert.deepEqual(await statisticsOf(space), stats);
      });
    });

    describe('deletes by tag larger than one chunk', () => {
      /** 5,000 features: the even ones tagged `gone`, every tenth also `x`, the odd ones `keep`. */
      const TOTAL = 5000;
      const tagged = (i: number) => ({
        type: 'Feature', id: `d${i}`, geometry: { type: 'Point', coordinates: [i % 180, i % 90] },
        properties: { i, [NS]: { tags: i % 2 === 0 ? ['gone', ...(i % 10 === 0 ? ['x'] : [])] : ['keep'] } },
      });

      test('deletes exactly the tagged features and keeps the counters right', async () => {
        const space = await spaceWith(TOTAL, tagged);
        assert.equal(await deleteByTags(space, 'gone'), TOTAL / 2);
        assert.equal(await countOf(space), TOTAL / 2);
        const expected = Array.from({ length: TOTAL / 2 }, (_, k) => `d${2 * k + 1}`);
        assert.deepEqual(await idsOf(space), expected);
        const search = await call(hub, 'GET', `/hub/spaces/${space}/search?tags=gone`);
        assert.deepEqual(search.body.features, []);
        // The counters come down to nothing with the last feature: no delete was counted twice or missed.
        assert.equal(await deleteByTags(space, 'keep'), TOTAL / 2);
        const stats = await statisticsOf(space);
        assert.deepEqual(stats.count, { value: 0, estimated: false });
        assert.equal(stats.dataSize.value, 0);
        assert.deepEqual(stats.bbox.value, []);
      });

      test('a tag expression deletes its AND and OR matches only', async () => {
        const space = await spaceWith(TOTAL, tagged);
        // gone AND x: every tenth feature.
        assert.equal(await deleteByTags(space, 'gone+x'), TOTAL / 10);
        assert.equal(await countOf(space), TOTAL - TOTAL / 10);
        assert.equal((await idsOf(space)).filter((id) => Number(id.slice(1)) % 10 === 0).length, 0);
        // x OR keep: the x ones are gone already, so the odd ones.
        assert.equal(await deleteByTags(space, 'x,keep'), TOTAL / 2);
        const left = await idsOf(space);
        assert.equal(left.length, TOTAL / 2 - TOTAL / 10);
        assert.ok(left.every((id) => Number(id.slice(1)) % 2 === 0 && Number(id.slice(1)) % 10 !== 0));
        assert.equal(await countOf(space), left.length);
      });

      test('tags=* deletes every feature', async () => {
        const space = await spaceWith(TOTAL, tagged);
        assert.equal(await deleteByTags(space, '*'), TOTAL);
        assert.equal(await countOf(space), 0);
        assert.deepEqual(await idsOf(space), []);
      });

      test('other requests are answered while a delete runs, and see the counters go down', async () => {
        const space = await spaceWith(TOTAL * 2, tagged);
        const other = await spaceWith(10, tagged);
        let deleting = true;
        const removal = deleteByTags(space, 'gone').finally(() => { deleting = false; });
        const counts: number[] = [];
        do {
          const [count, read, health] = await Promise.all([
            countOf(space), call(hub, 'GET', `/hub/spaces/${other}/features/d1`), call(hub, 'GET', '/hub'),
          ]);
          assert.equal(read.status, 200, read.text);
          assert.equal(health.status, 200, health.text);
          counts.push(count);
        } while (deleting);
        assert.equal(await removal, TOTAL);
        assert.ok(counts.every((count) => count >= TOTAL && count <= TOTAL * 2), `${counts}`);
        assert.deepEqual(counts, [...counts].sort((a, b) => b - a));
        assert.equal(await countOf(space), TOTAL);
      });
    });
  });
}
