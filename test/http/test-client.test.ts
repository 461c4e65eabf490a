// The tests' own HTTP client (helpers/http-request.ts, under `call`) answers as fetch, which it replaced, does: the suite's assertions keep their meaning.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call, createSpaceWith, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { point } from '../helpers/features.js';

/** Headers that differ from one answer to the next whichever client asks. */
const PER_ANSWER = new Set(['date', 'stream-id', 'connection', 'keep-alive']);

/** Status, headers and text as fetch gives them, for the same request as `call` sends. */
async function viaFetch(hub: HubProcess, method: string, path: string, headers: Record<string, string> = {}): Promise<Pick<TestResponse, 'status' | 'headers' | 'text'>> {
  const response = await fetch(hub.url + path, { method, headers: { authorization: `Bearer ${hub.token}`, ...headers } });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const comparable = (headers: Headers) => [...headers].filter(([name]) => !PER_ANSWER.has(name));

/** An error body names its request's stream id. */
const withoutStreamId = (text: string) => text.replace(/"streamId":"[^"]*"/gu, '');

// The client does not depend on the engine: one is enough.
describe(`the tests' HTTP client answers as fetch does (${BACKENDS[0]})`, () => {
  let hub: HubProcess;
  let space: string;
  before(async () => {
    hub = await startHub({ backend: BACKENDS[0] });
    space = await createSpaceWith(hub, Array.from({ length: 60 }, (_, i) => point(`p${i}`, { name: `feature number ${i}` })));
  });
  after(async () => { await hub?.stop(); });

  test('a compressed answer is decoded, its Content-Encoding kept, headers and text as fetch has them', async () => {
    const path = `/hub/spaces/${space}/iterate?limit=60`;
    const [ours, theirs] = [await call(hub, 'GET', path), await viaFetch(hub, 'GET', path)];
    assert.equal(ours.headers.get('content-encoding'), 'gzip', 'the default Accept-Encoding is sent, so the hub compresses');
    assert.equal(ours.body.features?.length, 60);
    assert.deepEqual([ours.status, comparable(ours.headers), ours.text], [theirs.status, comparable(theirs.headers), theirs.text]);
  });

  test('an uncompressed answer, 304, 404, HEAD and a method the path lacks, as fetch has them', async () => {
    const etag = (await call(hub, 'GET', `/hub/spaces/${space}/features/p1`)).headers.get('etag') ?? '';
    const requests: Array<[string, string, Record<string, string>]> = [
      ['GET', `/hub/spaces/${space}`, {}],
      ['GET', `/hub/spaces/${space}/features/p1`, { 'accept-encoding': 'identity' }],
      ['GET', `/hub/spaces/${space}/features/p1`, { 'if-none-match': etag }],
      ['GET', `/hub/spaces/${space}/features/missing`, {}],
      ['HEAD', `/hub/spaces/${space}/features/p1`, {}],
      ['DELETE', '/hub', {}],
    ];
    for (const [method, path, headers] of requests) {
      const [ours, theirs] = [await call(hub, method, path, { headers }), await viaFetch(hub, method, path, headers)];
      const seen = (response: Pick<TestResponse, 'status' | 'headers' | 'text'>) => [response.status, comparable(response.headers), withoutStreamId(response.text)];
      assert.deepEqual(seen(ours), seen(theirs), `${method} ${path}`);
    }
  });

  test('a write with a body, and one without, answer as they do through fetch', async () => {
    const written = await call(hub, 'PUT', `/hub/spaces/${space}/features/w`, { body: point('w', { n: 1 }) });
    assert.equal(written.status, 200, written.text);
    assert.equal(written.body.id, 'w');
    const empty = await call(hub, 'POST', `/hub/spaces/${space}/features`, { rawBody: '' });
    const fetched = await fetch(`${hub.url}/hub/spaces/${space}/features`, { method: 'POST', body: '', headers: { authorization: `Bearer ${hub.token}`, 'content-type': 'application/geo+json' } });
    assert.deepEqual([empty.status, withoutStreamId(empty.text)], [fetched.status, withoutStreamId(await fetched.text())]);
  });

  test('a hub that no longer listens makes the request fail', async () => {
    const stopped = await startHub({ backend: BACKENDS[0] });
    assert.equal((await call(stopped, 'GET', '/hub')).status, 200, 'a kept-alive connection is left in the pool');
    await stopped.stop();
    await assert.rejects(call(stopped, 'GET', '/hub'));
  });
});
