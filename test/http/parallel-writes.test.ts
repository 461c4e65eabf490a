// Parallel writes to one space: all of them land, the counters and the revision (ETags) follow every write, and a space deleted under a writer stays gone.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

function points(prefix: string, count: number): { type: string; features: FeatureJson[] } {
  return {
    type: 'FeatureCollection',
    features: Array.from({ length: count }, (_, i) => ({
      type: 'Feature', id: `${prefix}-${i}`, geometry: { type: 'Point', coordinates: [i / 100, 1] }, properties: { prefix, i },
    })),
  };
}

for (const backend of BACKENDS) {
  describe(`parallel writes to one space (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    test('ten concurrent PUTs all land; count, statistics and iterate agree', async () => {
      const space = await createSpace(hub);
      const answers = await Promise.all(Array.from({ length: 10 }, (_, writer) =>
        call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: points(`w${writer}`, 120), headers: { accept: 'application/x-empty' } })));
      assert.deepEqual(answers.map((answer) => answer.status), Array(10).fill(204));
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count, 1200);
      const statistics = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.equal((statistics.body.count as { value: number }).value, 1200);
      const all = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=5000`);
      const ids = (all.body.features ?? []).map((feature) => feature.id);
      assert.equal(new Set(ids).size, 1200);
    });

    test('every write changes the ETag, also past the point where change records are folded', async () => {
      const space = await createSpace(hub);
      const seen = new Set<string>();
      // More writes than PostgreSQL keeps as change rows before folding them into the counters (16).
      for (let write = 0; write < 40; write++) {
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features/f${write % 3}`, {
          body: { type: 'Feature', geometry: null, properties: { write } },
        });
        assert.equal(put.status, 200);
        const read = await call(hub, 'GET', `/hub/spaces/${space}/features/f${write % 3}`);
        assert.equal(read.status, 200);
        assert.equal((read.body.properties as { write: number }).write, write, 'a read after a write sees it');
        const etag = read.headers.get('etag') ?? '';
        assert.ok(!seen.has(etag), `the ETag after write ${write} was seen before`);
        seen.add(etag);
      }
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`)).body.count, 3);
      const unchanged = await call(hub, 'GET', `/hub/spaces/${space}/features/f0`);
      const again = await call(hub, 'GET', `/hub/spaces/${space}/features/f0`, { headers: { 'if-none-match': unchanged.headers.get('etag') ?? '' } });
      assert.equal(again.status, 304);
    });

    test('counters stay exact under concurrent inserts, updates and deletes by tag', async () => {
      const space = await createSpace(hub);
      const base = `/hub/spaces/${space}/features`;
      await call(hub, 'PUT', `${base}?addTags=old`, { body: points('old', 300) });
      await Promise.all([
        call(hub, 'PUT', base, { body: points('new', 200) }),
        call(hub, 'PUT', base, { body: points('old', 100) }),
        call(hub, 'DELETE', `${base}?tags=old`),
        call(hub, 'PUT', base, { body: points('more', 50) }),
      ]);
      const listed = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=5000`);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, (listed.body.features ?? []).length);
      const statistics = await call(hub, 'GET', `/hub/spaces/${space}/statistics`);
      assert.equal((statistics.body.count as { value: number }).value, count.body.count);
    });

    test('writes racing a space delete end in 200 or 404, and the space stays gone', async () => {
      const space = await createSpace(hub);
      const writes = Array.from({ length: 6 }, (_, writer) => call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: points(`r${writer}`, 50) }));
      const deleted = await call(hub, 'DELETE', `/hub/spaces/${space}`);
      assert.equal(deleted.status, 204);
      for (const answer of await Promise.all(writes)) assert.ok([200, 404].includes(answer.status), `status ${answer.status}: ${answer.text}`);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}`)).status, 404);
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`)).status, 404);
    });
  });
}
