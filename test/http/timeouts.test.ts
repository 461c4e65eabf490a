// Slow clients: headers sent too slowly, a body that stalls, a body that trickles past the request deadline; answered 408 in our shapes or cut off.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { collection, point } from '../helpers/features.js';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { metrics, sample } from '../helpers/metrics.js';
import { openConnection, pause, type RawAnswer, requestHead } from '../helpers/raw-http.js';

/** Short limits, so the tests need not wait long; the pauses below stay well inside or outside them. */
const ARGS = ['--headers-timeout', '1s', '--request-timeout', '3s', '--body-idle-timeout', '1s'];

/** Either the connection was closed without an answer, or the answer is a 408 in one of the documented error shapes. */
function assertTimedOut(answer: RawAnswer): void {
  if (answer.status === 0) return;
  assert.equal(answer.status, 408, answer.body);
  const body = JSON.parse(answer.body) as { type: string; code: string };
  assert.ok(body.type === 'error' || body.type === 'ErrorResponse', answer.body);
  assert.ok(!/\n\s+at /.test(answer.body), 'no stack trace');
}

for (const backend of BACKENDS) {
  describe(`timeouts for slow clients (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    before(async () => {
      hub = await startHub({ backend, args: ARGS });
      space = await createSpace(hub);
    });
    after(async () => { await hub.stop(); });

    test('headers sent byte by byte past the headers timeout are answered 408 and the connection is closed', async () => {
      const connection = await openConnection(hub);
      const head = requestHead(hub, 'GET', '/hub/spaces', { 'x-padding': 'p'.repeat(200) });
      let sent = 0;
      // One byte every 50 ms needs 15 s for these headers; the hub gives up after 1 s.
      const dripping = (async () => {
        while (connection.isOpen() && sent < head.length - 2) {
          await connection.send(head[sent++]).catch(() => undefined);
          await pause(50);
        }
      })();
      const answer = await connection.answer;
      await connection.closed;
      await dripping;
      assert.ok(sent < head.length - 2, 'the hub answered before the headers were complete');
      assert.equal(answer.status, 408, answer.body);
      const body = JSON.parse(answer.body) as { type: string; code: string };
      assert.equal(body.type, 'error');
      assert.equal(body.code, 'requestTimeout');
    });

    test('a body that stops arriving gets 408 Timeout in the ErrorResponse shape, the connection is closed and nothing is written', async () => {
      const text = JSON.stringify(collection(point('stalled')));
      const connection = await openConnection(hub);
      await connection.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'content-length': String(text.length) }));
      await connection.send(text.slice(0, 20));
      const answer = await connection.answer;
      await connection.closed;
      assert.equal(answer.status, 408, answer.body);
      const body = JSON.parse(answer.body) as { type: string; error: string; code: string; errorMessage: string };
      assert.equal(body.type, 'ErrorResponse');
      assert.equal(body.error, 'Timeout');
      assert.equal(body.code, 'bodyTimeout');
      assert.match(body.errorMessage, /no data for 1 seconds/);
      assert.equal(answer.headers.connection, 'close');
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, 0);
    });

    test('a body trickling in faster than the idle limit is still cut off at the request timeout', async () => {
      const text = JSON.stringify(collection(...Array.from({ length: 50 }, (_, i) => point(`trickle-${i}`))));
      const before = await metrics(hub);
      const connection = await openConnection(hub);
      await connection.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, { 'content-type': 'application/geo+json', 'content-length': String(text.length) }));
      let sent = 0;
      // Ten bytes every 200 ms: never idle for the 1 s limit, but the whole body would need minutes.
      const trickling = (async () => {
        while (connection.isOpen() && sent < text.length - 1) {
          await connection.send(text.slice(sent, sent + 10)).catch(() => undefined);
          sent += 10;
          await pause(200);
        }
      })();
      const answer = await connection.answer;
      await connection.closed;
      await trickling;
      assert.ok(sent < text.length - 1, 'the hub answered before the body was complete');
      assertTimedOut(answer);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, 0);
      // Counted with the status that went out (Node's parser wrote the 408, not the route), the hub having closed it.
      const after = await metrics(hub);
      const put = { method: 'PUT', route: '/hub/spaces/:spaceId/features' };
      const status = answer.status === 408 ? '408' : '444';
      const grown = (name: string, labels: Record<string, string>) => (sample(after, name, labels) ?? 0) - (sample(before, name, labels) ?? 0);
      assert.equal(grown('hub_http_requests_total', { ...put, status }), 1, after);
      assert.equal(grown('hub_http_requests_total', { ...put, status: '200' }), 0, after);
      assert.equal(grown('hub_http_requests_incomplete_total', { ...put, status, closed_by: 'hub' }), 1, after);
    });

    test('a client that sends at a normal pace is served under the same short limits', async () => {
      const text = JSON.stringify(collection(...Array.from({ length: 200 }, (_, i) => point(`paced-${i}`))));
      const connection = await openConnection(hub);
      await connection.send(requestHead(hub, 'PUT', `/hub/spaces/${space}/features`, {
        'content-type': 'application/geo+json', 'content-length': String(text.length), accept: 'application/x-empty',
      }));
      // Four pieces with pauses shorter than the idle limit.
      for (let at = 0; at < text.length; at += Math.ceil(text.length / 4)) {
        await pause(300);
        await connection.send(text.slice(at, at + Math.ceil(text.length / 4)));
      }
      const answer = await connection.answer;
      connection.destroy();
      assert.equal(answer.status, 204, answer.body);
      const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
      assert.equal(count.body.count, 200);
    });
  });
}
