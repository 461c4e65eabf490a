// A long read still streaming when its token is deleted or expires stops there on both engines: nothing written after goes out, as event streams end.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { call, createSpace } from '../helpers/http-client.js';
import { collection, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { readPausing } from '../helpers/paused-read.js';
import { ADMIN_PASSWORD, login, send } from '../helpers/sessions.js';


for (const backend of BACKENDS) {
  describe(`a streamed read outlives its token (${backend})`, () => {
    let hub: HubProcess;
    let session: string;
    let space: string;
    before(async () => {
      hub = await startHub({ backend, env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
      session = await login(hub, 'admin', ADMIN_PASSWORD);
      space = await createSpace(hub, { title: 'streamed' });
      // About 30 MB: past what is read whole before sending (4 MiB) and what the sockets hold, so the read waits on its client.
      const pad = 'x'.repeat(2500);
      for (let chunk = 0; chunk < 3; chunk++) {
        const features = Array.from({ length: 4000 }, (_, index) => point(`f${chunk}-${index}`, { pad }, [index / 1000, chunk]));
        const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...features), headers: { accept: 'application/x-empty' } });
        assert.equal(written.status, 204, written.text);
      }
    });
    after(async () => { await hub.stop(); });

    async function readToken(exp?: number): Promise<string> {
      const created = await send(hub, 'POST', '/token-api/tokens', { cookie: session, body: { ...(exp === undefined ? {} : { exp }), urm: { 'xyz-hub': { readFeatures: [{}] } } } });
      assert.equal(created.status, 200, created.text);
      return (created.json as { token: string }).token;
    }

    /** Iterates the whole space with `token`; after the first megabyte the client stops reading while `meanwhile` runs. */
    const streamWith = (token: string, meanwhile: () => Promise<void>) => readPausing(`${hub.url}/hub/spaces/${space}/iterate?limit=100000`, token, meanwhile);

    /** Writes a feature holding `secret` (each test its own, as they share the space). */
    const writeSecret = async (secret: string) => {
      const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(point(secret, { secret }, [1, 1])) });
      assert.equal(written.status, 200, written.text);
    };

    test('a token deleted while its read streams: the read stops before what is written after', async () => {
      const token = await readToken();
      const streamed = await streamWith(token, async () => {
        const deleted = await send(hub, 'DELETE', `/token-api/tokens/${token}`, { cookie: session });
        assert.equal(deleted.status, 204, deleted.text);
        await writeSecret('written-after-deletion');
        // A read in progress goes on on its decision for at most 100 ms (DECISION_LIFETIME_MS in decided-pages.ts).
        await sleep(300);
      });
      assert.equal(streamed.status, 200);
      assert.ok(!streamed.body.includes('written-after-deletion'), 'the stream carried a feature written after its token was deleted');
      assert.ok(streamed.cut, 'the stream ended as if complete');
      assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/count`, { headers: { authorization: `Bearer ${token}` } })).status, 401);
    });

    test('a token whose exp passes while its read streams: the read stops before what is written after', async () => {
      // Whole Unix seconds, at least 2 s ahead: the read has begun before it passes.
      const exp = Math.floor(Date.now() / 1000) + 3;
      const token = await readToken(exp);
      const streamed = await streamWith(token, async () => {
        await sleep(Math.max(0, exp * 1000 - Date.now()) + 50);
        await writeSecret('written-after-expiry');
        await sleep(300);
      });
      assert.equal(streamed.status, 200);
      assert.ok(!streamed.body.includes('written-after-expiry'), 'the stream carried a feature written after its token expired');
      assert.ok(streamed.cut, 'the stream ended as if complete');
    });

    test('a read whose token stays goes to its end, the feature written meanwhile included', async () => {
      const token = await readToken();
      const streamed = await streamWith(token, async () => {
        await writeSecret('written-while-waiting');
        await sleep(300);
      });
      assert.equal(streamed.status, 200);
      assert.ok(!streamed.cut, 'the stream was cut');
      assert.ok(streamed.body.endsWith('}'), streamed.body.slice(-200));
      assert.ok(streamed.body.includes('written-while-waiting'), 'a feature written while the read waited is read when its page comes');
    });
  });
}
