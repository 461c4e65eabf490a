// Crash durability in the middle of a request: a kill -9 during a PUT of 50,000 features or a space delete leaves all of it or none, with the counters, indexes and ids agreeing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { crashAndRestart } from '../helpers/crash.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const SIZE = 50_000;

/** 50,000 points spread over a degree, each with a property and a tag, so the spatial, tag and property indexes are all written. */
function batch(prefix: string): { type: string; features: object[] } {
  const features = Array.from({ length: SIZE }, (_, i) => ({
    type: 'Feature', id: `${prefix}-${i}`,
    geometry: { type: 'Point', coordinates: [8 + (i % 250) / 250, 50 + Math.floor(i / 250) / 250] },
    properties: { i, kind: i % 2 === 0 ? 'even' : 'odd', '@ns:com:here:xyz': { tags: ['batch'] } },
  }));
  return { type: 'FeatureCollection', features };
}

function ok(response: TestResponse, status = 200): TestResponse {
  assert.equal(response.status, status, response.text);
  return response;
}

/** Sends a request and kills the hub `afterMs` after sending it; says whether the answer came before the kill. */
async function killDuring(hub: HubProcess, method: string, path: string, body: unknown, afterMs: number): Promise<{ answered: number | undefined }> {
  let answered: number | undefined;
  const request = call(hub, method, path, { body }).then((response) => { answered = response.status; }, () => undefined);
  await new Promise((resolve) => setTimeout(resolve, afterMs));
  const before = answered;
  await hub.kill();
  await request;
  return { answered: before };
}

for (const backend of BACKENDS) {
  describe(`durability of a request cut by kill -9 (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(() => hub.stop());

    /** Every way of counting the space: count, statistics, iterate, a bbox read over everything and a tag search; all must agree. */
    async function counted(space: string): Promise<number> {
      const count = ok(await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count as number;
      const statistics = ok(await call(hub, 'GET', `/hub/spaces/${space}/statistics?skipCache=true`)).body.count as { value: number; estimated: boolean };
      const iterated = ok(await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=100000&selection=p.none`)).body.features ?? [];
      const inArea = ok(await call(hub, 'GET', `/hub/spaces/${space}/bbox?west=7&south=49&east=10&north=51&limit=100000&selection=p.none`)).body.features ?? [];
      const tagged = ok(await call(hub, 'GET', `/hub/spaces/${space}/search?tags=batch&limit=100000&selection=p.none`)).body.features ?? [];
      const even = ok(await call(hub, 'GET', `/hub/spaces/${space}/search?p.kind=even&limit=100000&selection=p.none`)).body.features ?? [];
      if (!statistics.estimated) assert.equal(statistics.value, count, 'statistics agree with count');
      assert.equal(iterated.length, count, 'iterate agrees with count');
      assert.equal(inArea.length, count, 'the spatial index agrees with count');
      assert.equal(tagged.length, count, 'the tag index agrees with count');
      assert.equal(even.length, count / 2, 'the property search agrees with count');
      assert.equal(new Set(iterated.map((feature) => feature.id)).size, count, 'no id twice');
      return count;
    }

    test('a PUT of 50,000 features cut by kill -9 is all there or not at all; an answered one is all there', async (t) => {
      const whole = await createSpace(hub);
      const started = Date.now();
      ok(await call(hub, 'PUT', `/hub/spaces/${whole}/features`, { body: batch('whole') }));
      const duration = Date.now() - started;
      const cut = await createSpace(hub);
      const { answered } = await killDuring(hub, 'PUT', `/hub/spaces/${cut}/features`, batch('cut'), Math.round(duration / 2));
      hub = await crashAndRestart(hub);

      assert.equal(await counted(whole), SIZE);
      const left = await counted(cut);
      assert.ok(left === 0 || left === SIZE, `all or nothing, found ${left} (the write took ${duration} ms; killed at half, answered: ${answered})`);
      if (answered === 200) assert.equal(left, SIZE);
      t.diagnostic(`write of ${duration} ms killed at half: answered ${answered ?? 'no'}, ${left} features after the restart`);
      // The space takes writes again, and its counters move from where they stand.
      ok(await call(hub, 'PUT', `/hub/spaces/${cut}/features/after-crash`, { body: { type: 'Feature', geometry: { type: 'Point', coordinates: [8.5, 50.5] }, properties: { kind: 'even' } } }));
      assert.equal(ok(await call(hub, 'GET', `/hub/spaces/${cut}/count`)).body.count, left + 1);
    });

    test('a space delete cut by kill -9 leaves the space whole or gone, and a gone space\'s id takes a new, empty space', async (t) => {
      const timed = await createSpace(hub);
      ok(await call(hub, 'PUT', `/hub/spaces/${timed}/features`, { body: batch('timed') }));
      const started = Date.now();
      ok(await call(hub, 'DELETE', `/hub/spaces/${timed}`), 204);
      const duration = Date.now() - started;
      const cut = await createSpace(hub);
      ok(await call(hub, 'PUT', `/hub/spaces/${cut}/features`, { body: batch('cut') }));
      const { answered } = await killDuring(hub, 'DELETE', `/hub/spaces/${cut}`, undefined, Math.max(1, Math.round(duration / 2)));
      hub = await crashAndRestart(hub);

      const space = await call(hub, 'GET', `/hub/spaces/${cut}`);
      t.diagnostic(`delete of ${duration} ms killed at half: answered ${answered ?? 'no'}, the space ${space.status === 200 ? 'whole' : 'gone'} after the restart`);
      if (space.status === 200) {
        assert.notEqual(answered, 204, 'an answered delete is not undone');
        assert.equal(await counted(cut), SIZE);
      } else {
        assert.equal(space.status, 404, space.text);
        assert.equal((await call(hub, 'GET', `/hub/spaces/${cut}/features/cut-1`)).status, 404);
        ok(await call(hub, 'POST', '/hub/spaces', { body: { id: cut, title: 'the id again' } }));
        assert.equal(await counted(cut), 0);
      }
    });
  });
}
