// Black-box tests of area reads whose first page comes with the space's lookup (PostgreSQL's getWithArea): the pages after it, the limit, composite spaces and deletes, on both engines.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, createSpaceWith } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

/** More than the first page's 250 features and fewer than its probe's 501: the read goes on after the first page. */
const COUNT = 400;
const BOX = 'west=10&south=10&east=11&north=11';

/** Point `i` inside BOX, placed so that insertion order is not the order of any coordinate. */
function point(i: number, prefix = 'p'): object {
  const x = 10 + ((i * 7919) % COUNT) / COUNT;
  const y = 10 + ((i * 104729) % COUNT) / COUNT;
  return { type: 'Feature', id: `${prefix}${i}`, geometry: { type: 'Point', coordinates: [x, y] }, properties: { i } };
}

const idsOf = (body: Record<string, unknown>) => (body.features as Array<{ id: string }>).map((feature) => feature.id);
const range = (count: number, prefix = 'p') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

for (const backend of BACKENDS) {
  describe(`area reads past their first page (${backend})`, () => {
    let hub: HubProcess;
    let space: string;

    before(async () => {
      hub = await startHub({ backend });
      space = await createSpaceWith(hub, Array.from({ length: COUNT }, (_, i) => point(i)));
    });
    after(async () => { await hub.stop(); });

    test('every feature of the box in insertion order, whatever the limit', async () => {
      for (const limit of [100, 250, 251, 300, 400, 5000]) {
        const response = await call(hub, 'GET', `/hub/spaces/${space}/bbox?${BOX}&limit=${limit}`);
        assert.equal(response.status, 200, response.text);
        assert.deepEqual(idsOf(response.body), range(Math.min(limit, COUNT)), `limit ${limit}`);
      }
    });

    test('a tile and a spatial search go on after the first page as well', async () => {
      const tile = await call(hub, 'GET', `/hub/spaces/${space}/tile/web/6_33_30?limit=300`);
      assert.equal(tile.status, 200, tile.text);
      assert.deepEqual(idsOf(tile.body), range(300));
      const search = await call(hub, 'GET', `/hub/spaces/${space}/spatial?lat=10.5&lon=10.5&radius=100000&limit=350`);
      assert.equal(search.status, 200, search.text);
      assert.deepEqual(idsOf(search.body), range(350));
    });

    test('a composite space shows its base and its own features, not only its own', async () => {
      const composite = await createSpace(hub, { title: 'composite', extends: { spaceId: space } });
      const put = await call(hub, 'PUT', `/hub/spaces/${composite}/features`, { body: { type: 'FeatureCollection', features: [point(0, 'own')] } });
      assert.equal(put.status, 200, put.text);
      const response = await call(hub, 'GET', `/hub/spaces/${composite}/bbox?${BOX}&limit=5000`);
      assert.equal(response.status, 200, response.text);
      const ids = idsOf(response.body);
      assert.equal(ids.length, COUNT + 1);
      assert.ok(ids.includes('own0') && ids.includes(`p${COUNT - 1}`));
    });

    test('a space deleted between two reads is a 404 at the second', async () => {
      const gone = await createSpaceWith(hub, [point(1)]);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${gone}/bbox?${BOX}`)).status, 200);
      assert.equal((await call(hub, 'DELETE', `/hub/spaces/${gone}`)).status, 204);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${gone}/bbox?${BOX}`)).status, 404);
    });
  });
}
