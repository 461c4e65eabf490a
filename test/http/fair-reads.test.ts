// Fairness under load: a large read does not hold the hub while it runs, so requests arriving meanwhile are answered first.
import assert from 'node:assert/strict';
import { Agent, get } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

/**
 * Enough features for a read of many storage pages (nine of 2,000 on SQLite) whose answer stays below the 4 MiB that
 * are held, hashed and sent at once: small features, about 190 bytes each with the hub's namespace.
 */
const FEATURES = 18_000;

const point = (i: number) => ({
  type: 'Feature', id: `p${i}`, geometry: { type: 'Point', coordinates: [(i % 360) - 179.5, ((i / 360) % 170) - 84.5] }, properties: {},
});

for (const backend of BACKENDS) {
  describe(`fair reads (${backend})`, () => {
    let hub: HubProcess;
    let space: string;

    before(async () => {
      hub = await startHub({ backend, env: { HUB_WORKERS: '1' } });
      space = await createSpace(hub);
      for (let start = 0; start < FEATURES; start += 6_000) {
        const features = Array.from({ length: 6_000 }, (_, i) => point(start + i));
        const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, {
          body: { type: 'FeatureCollection', features }, headers: { accept: 'application/x-empty' },
        });
        assert.equal(put.status, 204, put.text);
      }
    });
    after(async () => { await hub.stop(); });

    /** Resolves when the answer's status line arrives: the hub holds an answer below 4 MiB until its read is done. */
    const answerBegins = (path: string, agent?: Agent, whole = false) => new Promise<void>((resolve, reject) => {
      get(`${hub.url}${path}`, { agent, headers: { authorization: `Bearer ${hub.token}` } }, (response) => {
        assert.equal(response.statusCode, 200);
        if (whole) response.on('end', resolve);
        else resolve();
        response.resume();
      }).on('error', reject);
    });

    test('requests sent while a large read is under way are answered before it ends', async () => {
      // The small requests go over connections opened beforehand, so that they need nothing but one read of their socket.
      const agent = new Agent({ keepAlive: true, maxSockets: 3 });
      const byId = (n: number, whole = false) => answerBegins(`/hub/spaces/${space}/features/p${n}`, agent, whole);
      await Promise.all([1, 2, 3].map((n) => byId(n, true)));
      const events: string[] = [];
      const large = answerBegins(`/hub/spaces/${space}/iterate?limit=${FEATURES}`).then(() => { events.push('large'); });
      // Once the large read has begun: it takes far longer than this on either engine.
      await new Promise((resolve) => setTimeout(resolve, 15));
      const small = [1, 2, 3].map((n) => byId(n).then(() => { events.push(`small ${n}`); }));
      await Promise.all([large, ...small]);
      agent.destroy();
      assert.equal(events.at(-1), 'large', `answers in the order ${events.join(', ')}`);
    });

    test('connections opened while large reads are under way are served before those reads end', async () => {
      // Node takes one new connection per turn of its event loop. Were every read's page run in one turn, the 24
      // connections would be taken one per 20 pages, most of them after the large reads (180 pages); with turns
      // of about 5 ms they are taken within a few pages each, however fast a page is.
      // The large reads go over connections opened beforehand, so that all of them run from the first turn.
      const warm = new Agent({ keepAlive: true, maxSockets: 20 });
      await Promise.all(Array.from({ length: 20 }, (_, n) => answerBegins(`/hub/spaces/${space}/features/p${n}`, warm, true)));
      const events: string[] = [];
      const large = Array.from({ length: 20 }, () => answerBegins(`/hub/spaces/${space}/iterate?limit=${FEATURES}`, warm)
        .then(() => { events.push('large'); }));
      await new Promise((resolve) => setTimeout(resolve, 15));
      const fresh = new Agent({ keepAlive: false });
      const small = Array.from({ length: 24 }, (_, n) => answerBegins(`/hub/spaces/${space}/features/p${n}`, fresh, true)
        .then(() => { events.push('small'); }));
      await Promise.all([...large, ...small]);
      fresh.destroy();
      warm.destroy();
      assert.equal(events.indexOf('large'), 24, `answers in the order ${events.join(', ')}`);
    });
  });
}
