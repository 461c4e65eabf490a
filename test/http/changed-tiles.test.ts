// Black-box tests of GET /changesets/tiles (issue 24 section 4) against a brute-force oracle: a tile is listed exactly when its GeoJSON answer differs between the two versions, on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { assertError, call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { seededRandom } from '../helpers/seeded-random.js';
import { issueToken, ownerRights } from '../helpers/tokens.js';
import { webX, webY } from '../helpers/web-tiles.js';

/** The area the random features stay in; the oracle reads every tile over it and one ring of tiles around it. */
const AREA = { west: 10.5, south: 50.2, east: 12.5, north: 51.2 };

const hereX = (lon: number, level: number) => Math.floor((lon + 180) / (360 / 2 ** level));
const hereY = (lat: number, level: number) => Math.floor((lat + 90) / (360 / 2 ** level));
const quadkey = (level: number, x: number, y: number) => {
  let key = '';
  for (let bit = level - 1; bit >= 0; bit--) key += String(((x >> bit) & 1) + 2 * ((y >> bit) & 1));
  return key;
};

interface Grid { type: 'web' | 'here' | 'quadkey'; level: number; ids: string[] }

/** Every tile id over the area and one ring around it, as the tile route names them. */
function gridOf(type: Grid['type'], level: number): Grid {
  const ids: string[] = [];
  const here = type === 'here';
  const [x0, x1] = here ? [hereX(AREA.west, level), hereX(AREA.east, level)] : [webX(AREA.west, level), webX(AREA.east, level)];
  const [y0, y1] = here ? [hereY(AREA.south, level), hereY(AREA.north, level)] : [webY(AREA.north, level), webY(AREA.south, level)];
  for (let x = x0 - 1; x <= x1 + 1; x++) {
    for (let y = y0 - 1; y <= y1 + 1; y++) ids.push(type === 'web' ? `${level}_${x}_${y}` : quadkey(level, x, y));
  }
  return { type, level, ids };
}

const GRIDS = [gridOf('web', 10), gridOf('quadkey', 9), gridOf('here', 9)];

type Position = [number, number];
const NS = '@ns:com:here:xyz';

function randomGeometry(random: () => number): object {
  const at = (): Position => [AREA.west + random() * (AREA.east - AREA.west), AREA.south + random() * (AREA.north - AREA.south)];
  const kind = random();
  if (kind < 0.5) return { type: 'Point', coordinates: at() };
  const [lon, lat] = at();
  const near = (): Position => [Math.min(AREA.east, lon + random() * 0.4), Math.min(AREA.north, lat + random() * 0.3)];
  if (kind < 0.8) return { type: 'LineString', coordinates: [[lon, lat], near(), near()] };
  const [east, north] = near();
  return { type: 'Polygon', coordinates: [[[lon, lat], [east, lat], [east, north], [lon, north], [lon, lat]]] };
}

const feature = (id: string, geometry: object, n: number) => ({ type: 'Feature', id, geometry, properties: { n, [NS]: { tags: [] } } });

for (const backend of BACKENDS) {
  describe(`changed tiles (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    const get = (path: string, token?: string): Promise<TestResponse> =>
      call(hub, 'GET', path, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    const changed = (space: string, query: string, token?: string) => get(`/hub/spaces/${space}/changesets/tiles?${query}`, token);

    /** The features of a tile's GeoJSON answer at a version, as text: what a CDN would have cached. */
    async function tileAt(space: string, grid: Grid, id: string, version: number): Promise<string> {
      const response = await get(`/hub/spaces/${space}/tile/${grid.type}/${id}?version=${version}&limit=100000`);
      assert.equal(response.status, 200, response.text);
      return JSON.stringify(response.body.features);
    }

    test('a tile is listed exactly when its answer differs between the two versions (random writes, three schemes)', async () => {
      const random = seededRandom(24);
      const space = await createSpace(hub, { versionsToKeep: 100 });
      const put = async (features: object[]) => assert.equal((await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } })).status, 200);
      let next = 0;
      const live: string[] = [];
      const created = () => {
        const id = `f${next++}`;
        live.push(id);
        return feature(id, randomGeometry(random), 0);
      };
      // Version 0, with a point on a tile edge of every grid (11.25° east is a column edge of web 10 and here 9).
      await put([...Array.from({ length: 30 }, created), feature('edge', { type: 'Point', coordinates: [11.25, 50.625] }, 0)]);
      for (let round = 1; round <= 6; round++) {
        const moved = live.filter(() => random() < 0.15).map((id) => feature(id, randomGeometry(random), round));
        const touched = live.filter(() => random() < 0.1).map((id) => ({ type: 'Feature', id, properties: { n: round * 10, [NS]: { tags: [] } } }));
        const changes = [...moved, ...Array.from({ length: 3 }, created)];
        if (round === 3) changes.push(feature('edge', { type: 'Point', coordinates: [11.25, 50.7] }, round));
        await put(changes);
        if (touched.length > 0) assert.equal((await call(hub, 'POST', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: touched } })).status, 200);
        const gone = live.splice(Math.floor(random() * live.length), 1);
        assert.equal((await call(hub, 'DELETE', `/hub/spaces/${space}/features/${gone[0]}`)).status, 204);
      }
      const head = Number((await changed(space, 'startVersion=0&type=web&level=10')).body.endVersion);
      assert.ok(head >= 12, `head ${head}`);
      const answers = new Map<string, string>();
      const cachedTile = async (grid: Grid, id: string, version: number) => {
        const key = `${grid.type} ${id} ${version}`;
        if (!answers.has(key)) answers.set(key, await tileAt(space, grid, id, version));
        return answers.get(key) as string;
      };
      let listedTotal = 0;
      for (const [a, b] of [[0, head], [2, 5], [head - 1, head], [4, 4], [1, 2]]) {
        for (const grid of GRIDS) {
          const response = await changed(space, `startVersion=${a}&endVersion=${b}&type=${grid.type}&level=${grid.level}`);
          assert.equal(response.status, 200, response.text);
          assert.equal(response.headers.get('content-type'), 'application/json');
          assert.deepEqual([response.body.type, response.body.tileType, response.body.startVersion, response.body.endVersion], ['ChangedTiles', grid.type, a, b]);
          const listed = (response.body.levels as unknown as Record<string, string[]>)[String(grid.level)];
          for (const id of listed) assert.ok(grid.ids.includes(id), `${grid.type} ${id} outside the area`);
          const expected: string[] = [];
          for (const id of grid.ids) if ((await cachedTile(grid, id, a)) !== (await cachedTile(grid, id, b))) expected.push(id);
          assert.deepEqual([...listed].sort(), expected.sort(), `${grid.type} ${grid.level} ${a}..${b}`);
          listedTotal += listed.length;
        }
      }
      assert.ok(listedTotal > 50, `only ${listedTotal} tiles listed: the oracle compared too little`);
    });

    test('a level range lists each level; the here ids follow the scheme; an end past HEAD is HEAD', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [feature('a', { type: 'Point', coordinates: [11.1, 50.9] }, 0)] } });
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [feature('a', { type: 'Point', coordinates: [11.6, 50.4] }, 1)] } });
      const response = await changed(space, 'startVersion=0&endVersion=99&type=web&level=3..5');
      assert.equal(response.status, 200, response.text);
      assert.equal(response.body.endVersion, 1);
      const levels = response.body.levels as unknown as Record<string, string[]>;
      assert.deepEqual(Object.keys(levels), ['3', '4', '5']);
      assert.deepEqual(levels['3'], ['3_4_2']);
      const before = await get(`/hub/spaces/${space}/tile/web/${levels['5'][0]}?version=0`);
      assert.equal(before.status, 200);
      const here = await changed(space, 'startVersion=0&type=here&level=4');
      assert.deepEqual((here.body.levels as unknown as Record<string, string[]>)['4'], [quadkey(4, hereX(11.1, 4), hereY(50.9, 4))]);
    });

    test('a feature on tile edges is in every tile it touches, as the tile reads find it', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      const put = (features: object[]) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features } });
      await put([feature('far', { type: 'Point', coordinates: [-100, -40] }, 0)]);
      // 11.25° east and the equator are edges at every level from 5 on: the corner of four web tiles and of four here tiles.
      await put([feature('corner', { type: 'Point', coordinates: [11.25, 0] }, 1)]);
      for (const [type, expected] of [['web', ['10_543_511', '10_543_512', '10_544_511', '10_544_512']],
        ['here', [quadkey(10, 543, 255), quadkey(10, 543, 256), quadkey(10, 544, 255), quadkey(10, 544, 256)].sort()]] as const) {
        const response = await changed(space, `startVersion=0&type=${type}&level=10`);
        assert.deepEqual((response.body.levels as unknown as Record<string, string[]>)['10'], expected, response.text);
        for (const id of expected) {
          const tile = await get(`/hub/spaces/${space}/tile/${type}/${id}`);
          assert.ok(tile.text.includes('"corner"'), `${type} ${id}: ${tile.text}`);
        }
      }
    });

    test('bad input is a 400 naming what is wrong; rights, history and layers are checked', async () => {
      const space = await createSpace(hub, { versionsToKeep: 10 });
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [feature('big', { type: 'Polygon', coordinates: [[[-60, -40], [60, -40], [60, 40], [-60, 40], [-60, -40]]] }, 0)] } });
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [feature('big', { type: 'Point', coordinates: [1, 1] }, 1)] } });
      assertError(await changed(space, 'type=web&level=3'), 400, 'invalidParameter', 'startVersion');
      assertError(await changed(space, 'startVersion=x&type=web&level=3'), 400, 'invalidParameter', 'startVersion');
      assertError(await changed(space, 'startVersion=0&level=3'), 400, 'invalidParameter', 'type');
      assertError(await changed(space, 'startVersion=0&type=hexagon&level=3'), 400, 'invalidParameter', 'type');
      for (const level of ['', '32', '5..3', '-1', 'x', '1..2..3']) assertError(await changed(space, `startVersion=0&type=web&level=${level}`), 400, 'invalidParameter', 'level');
      assertError(await changed(space, 'startVersion=0&type=quadkey&level=0'), 400, 'invalidParameter', 'level');
      assertError(await changed(space, 'startVersion=1&endVersion=0&type=web&level=3'), 400, 'invalidParameter', 'startVersion');
      assertError(await changed(space, 'startVersion=5&type=web&level=3'), 400, 'versionNotYet', 'HEAD is 1');
      assertError(await changed(space, 'startVersion=0&type=web&level=14'), 400, 'changedTilesTooMany', 'coarser level');
      assert.equal((await changed(space, 'startVersion=0&type=web&level=6')).status, 200);
      const plain = await createSpace(hub);
      await call(hub, 'PUT', `/hub/spaces/${plain}/features`, { body: { type: 'FeatureCollection', features: [feature('a', { type: 'Point', coordinates: [1, 1] }, 0)] } });
      assertError(await changed(plain, 'startVersion=0&type=web&level=3'), 400, 'noHistory');
      const composite = await createSpace(hub, { extends: { spaceId: space } });
      assertError(await changed(composite, 'startVersion=0&type=web&level=3'), 400, 'historyOfLayers');
      const outsider = await issueToken(hub, { aid: 'changed-tiles-outsider', urm: ownerRights('changed-tiles-outsider') });
      const refused = await changed(space, 'startVersion=0&type=web&level=3', outsider.token);
      assertError(refused, 403, 'insufficientRights');
      assert.ok(!refused.text.includes('levels'), refused.text);
      assert.equal((await changed(space, 'startVersion=0&type=web&level=3', outsider.token.slice(1))).status, 401);
    });
  });
}
