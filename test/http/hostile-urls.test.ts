// Black-box tests of requests refused before any endpoint runs, on every route of the route table: documented error shapes with CORS, and no token echoed in answers or logs.
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { routes } from '../../src/http/routes.js';
import { assertRefused, isErrorShape } from '../helpers/hostile.js';
import { call, createSpace, type TestResponse } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { openConnection, pause, type RawAnswer, requestHead } from '../helpers/raw-http.js';
import { MAX_URI_LENGTH } from '../../src/http/uri-limit.js';

const SECRET = 'SECRET0token0value';
const ORIGIN = 'http://map.example';

/** The answer Node or the framework writes must hold no token, in body or headers, and carry CORS and a stream id. */
function assertClean(response: TestResponse, label: string): void {
  assert.ok(response.status >= 200 && response.status < 500, `${label}: ${response.status} ${response.text.slice(0, 300)}`);
  assert.ok(!response.text.includes(SECRET), `${label} echoes the token: ${response.text.slice(0, 300)}`);
  for (const [name, value] of response.headers) assert.ok(!value.includes(SECRET), `${label} header ${name} echoes the token`);
  assert.ok(response.headers.get('access-control-allow-origin'), `${label}: CORS header`);
  assert.ok(response.headers.get('stream-id'), `${label}: stream id`);
}

/** Sends raw bytes and returns the raw answer: for requests fetch refuses to send. */
function rawRequest(hub: HubProcess, text: string): Promise<string> {
  const { hostname, port } = new URL(hub.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.end(text));
    let answer = '';
    socket.on('data', (chunk: Buffer) => { answer += chunk.toString(); });
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

for (const backend of BACKENDS) {
  describe(`requests refused before an endpoint runs (${backend})`, () => {
    let hub: HubProcess;
    let space: string;
    let output = '';
    before(async () => {
      hub = await startHub({ backend, env: { HUB_LOG_LEVEL: 'trace' } });
      hub.process.stdout?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
      hub.process.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
      space = await createSpace(hub);
      await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'f1', geometry: null, properties: {} }] } });
    });
    after(async () => { await hub.stop(); });

    const concrete = (path: string, spaceId = space, featureId = 'f1') =>
      path.replace(':spaceId', spaceId).replace(':featureId', featureId);
    const send = (method: string, path: string, headers: Record<string, string> = {}) =>
      call(hub, method, path, { anonymous: true, headers: { origin: ORIGIN, ...headers } });
    /** A search of the space whose URI is `length` characters long, the token in its query. */
    const uri = (length: number) => {
      const prefix = `/hub/spaces/${space}/search?access_token=${SECRET}&p.pad=`;
      return prefix + 'x'.repeat(length - prefix.length);
    };
    /** The answer to a request sent in pieces; the hub may close the connection before the last of them is written. */
    const rawAnswer = async (pieces: string[]): Promise<RawAnswer> => {
      const connection = await openConnection(hub);
      try {
        for (const piece of pieces) {
          if (!connection.isOpen()) break;
          await connection.send(piece).catch(() => undefined);
          await pause(10);
        }
        return await connection.answer;
      } finally {
        connection.destroy();
      }
    };

    test('a malformed percent-encoding or an over-long segment in the path answers 400 or 414 in the type:error shape, on every route', async () => {
      for (const route of routes) {
        const label = `${route.method} ${route.path}`;
        if (route.path.includes(':featureId')) {
          assertRefused(await send(route.method, `${concrete(route.path, space, '%zz')}?access_token=${SECRET}`), 400, 'malformedUrl', label);
          assertRefused(await send(route.method, `${concrete(route.path, space, 'f'.repeat(1001))}?access_token=${SECRET}`), 414, 'uriTooLong', label);
        }
        if (route.path.includes(':spaceId')) {
          const bad = await send(route.method, `${concrete(route.path, 'a%E0%A4%A')}?access_token=${SECRET}`);
          assertRefused(bad, 400, 'malformedUrl', label);
          assertClean(bad, label);
          assertRefused(await send(route.method, `${concrete(route.path, 's'.repeat(1001))}?access_token=${SECRET}`), 414, 'uriTooLong', label);
        } else {
          const unknown = await send(route.method, `${route.path === '/' ? '' : route.path}/%zz?access_token=${SECRET}`);
          assert.ok(unknown.status === 404 || unknown.status === 400 || unknown.status === 405, `${label}: ${unknown.status}`);
          assert.ok(isErrorShape(unknown.body, route.path, ['error']), `${label}: ${unknown.text.slice(0, 200)}`);
          assertClean(unknown, label);
        }
      }
    });

    test('malformed query values never echo the token and never answer 5xx, on every route', async () => {
      const queries = [
        `access_token=${SECRET}%zz`, `access_token=%zz${SECRET}`, `access_token=${SECRET}&limit=%zz`,
        `access_token=${SECRET}&id=%zz&tags=%zz&selection=%zz&p.x=%zz&handle=%zz&force2D=%zz`,
        `access_token=${SECRET}&p.%zz=1&f.id=%ED%A0%80`, `ACCESS_TOKEN=${SECRET}%`,
      ];
      for (const route of routes) {
        for (const query of queries) {
          const response = await send(route.method, `${concrete(route.path)}?${query}`);
          assertClean(response, `${route.method} ${route.path}?${query.slice(0, 40)}`);
          // The Token API answers its 412 and 404 as text (API.md 9).
          const text = ['tokenId is not valid', 'Token not found'].includes(response.text);
          if (response.status >= 400 && !text) assert.ok(isErrorShape(response.body, route.path), response.text);
        }
        // Authorized, so that the endpoints parse their parameters; the space itself is not deleted.
        if (route.method === 'DELETE' && route.path.endsWith(':spaceId')) continue;
        const authorized = await send(route.method, `${concrete(route.path, space, 'nothing')}?access_token=${SECRET}%zz&tags=%zz&limit=${SECRET}`, { authorization: `Bearer ${hub.token}` });
        assertClean(authorized, `${route.method} ${route.path} with a token`);
      }
    });

    test('a URL past MAX_URI_LENGTH answers 414, headers past the size Node accepts 431, in the type:error shape, on every route', async () => {
      for (const route of routes) {
        const label = `${route.method} ${route.path}`;
        const longUrl = await send(route.method, `${concrete(route.path)}?access_token=${SECRET}&pad=${'x'.repeat(20000)}`);
        assertRefused(longUrl, 414, 'uriTooLong', label);
        assertClean(longUrl, label);
        const longHeader = await send(route.method, concrete(route.path), { authorization: `Bearer ${SECRET}`, 'x-pad': 'y'.repeat(20000) });
        assertRefused(longHeader, 431, 'headersTooLarge', label);
        assertClean(longHeader, label);
      }
    });

    test('over a raw socket the length of the URI alone decides 414, whether it arrives at once or in pieces; headers past Node\'s 16 KiB with a URI within it are 431', async () => {
      const token = `access_token=${SECRET}`;
      const cors = { origin: ORIGIN };
      const cases: Array<[string, string[], number, string]> = [
        ['a 100,000-character path', [requestHead(hub, 'GET', `/${'a'.repeat(100_000)}?${token}`, cors)], 414, 'uriTooLong'],
        ['a 100,000-character path in pieces', [`GET /hub/spaces/${space}/`, 'a'.repeat(10_000), 'a'.repeat(10_000),
          `${'a'.repeat(80_000)}?${token} HTTP/1.1\r\nHost: x\r\n\r\n`], 414, 'uriTooLong'],
        ['a URI one character over MAX_URI_LENGTH', [requestHead(hub, 'GET', uri(MAX_URI_LENGTH + 1), cors)], 414, 'uriTooLong'],
        ['a short path with 100 KB of headers', [requestHead(hub, 'GET', `/hub/spaces?${token}`, { ...cors, 'x-pad': 'y'.repeat(100_000) })], 431, 'headersTooLarge'],
        ['a URI within MAX_URI_LENGTH with 2 KB of headers', [requestHead(hub, 'GET', uri(15_000), { ...cors, 'x-pad': 'y'.repeat(2_000) })], 431, 'headersTooLarge'],
      ];
      for (const [label, pieces, status, code] of cases) {
        const answer = await rawAnswer(pieces);
        assert.equal(answer.status, status, `${label}: ${answer.body.slice(0, 300)}`);
        const body = JSON.parse(answer.body) as Record<string, unknown>;
        assert.equal(body.type, 'error', label);
        assert.equal(body.code, code, label);
        assert.equal(body.statusCode, status, label);
        assert.equal(typeof body.streamId, 'string', label);
        assert.ok(answer.headers['access-control-allow-origin'], `${label}: CORS header`);
        assert.ok(!answer.body.includes(SECRET) && !Object.values(answer.headers).some((value) => value.includes(SECRET)), `${label} echoes the token`);
      }
      for (const length of [9_000, MAX_URI_LENGTH]) {
        const served = await rawAnswer([requestHead(hub, 'GET', uri(length))]);
        assert.equal(served.status, 200, `a URI of ${length} characters: ${served.body.slice(0, 300)}`);
      }
    });

    test('a request that is not valid HTTP answers 400 in the type:error shape', async () => {
      for (const request of [
        `GET /hub/spaces?access_token=${SECRET} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n`,
        `GET /hub/spaces?access_token=${SECRET} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n\r\n`,
        `G\u0000T /hub HTTP/1.1\r\n\r\n`,
      ]) {
        const answer = await rawRequest(hub, request);
        assert.match(answer, /^HTTP\/1\.1 400 /, answer);
        assert.ok(!answer.includes(SECRET), answer);
        assert.match(answer, /access-control-allow-origin: \*/i);
        const body = JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
        assert.equal(body.type, 'error');
        assert.equal(body.code, 'malformedRequest');
      }
    });

    test('methods the hub does not serve answer in the type:error shape; preflights answer 204, on refused URLs too', async () => {
      for (const route of routes) {
        const label = `PROPFIND ${route.path}`;
        const response = await send('PROPFIND', `${concrete(route.path)}?access_token=${SECRET}`);
        assert.ok(response.status === 404 || response.status === 405, `${label}: ${response.status}`);
        assert.ok(isErrorShape(response.body, route.path, ['error']), `${label}: ${response.text.slice(0, 200)}`);
        assertClean(response, label);
        const preflight = await send('OPTIONS', concrete(route.path), { 'access-control-request-method': route.method });
        assert.equal(preflight.status, 204, `OPTIONS ${route.path}`);
        assert.equal(preflight.headers.get('access-control-allow-origin'), ORIGIN);
        if (!route.path.includes(':')) continue;
        // The router refuses these URLs, but the preflight must pass for the browser to show the error.
        for (const refused of [concrete(route.path, '%zz', '%zz'), concrete(route.path, 's'.repeat(1001), 'f'.repeat(1001))]) {
          const badPreflight = await send('OPTIONS', refused, { 'access-control-request-method': route.method, 'access-control-request-headers': 'authorization' });
          assert.equal(badPreflight.status, 204, `OPTIONS ${refused.slice(0, 40)}`);
          assert.equal(badPreflight.headers.get('access-control-allow-origin'), ORIGIN);
          assert.match(badPreflight.headers.get('access-control-allow-methods') ?? '', new RegExp(route.method));
          assert.match(badPreflight.headers.get('access-control-allow-headers') ?? '', /authorization/i);
        }
      }
    });

    test('the space still answers after all of it, and no log line holds the token or a stack trace', async () => {
      for (const read of ['search', 'statistics', 'count', 'iterate']) {
        assert.equal((await call(hub, 'GET', `/hub/spaces/${space}/${read}`)).status, 200, read);
      }
      // The refusals were logged (at debug), so the log was there to leak into.
      for (const code of ['malformedUrl', 'uriTooLong', 'headersTooLarge', 'malformedRequest']) assert.match(output, new RegExp(code));
      assert.ok(!output.includes(SECRET), 'the token appears in the log');
      assert.doesNotMatch(output, /\n\s+at .+:\d+:\d+/, 'a stack trace appears in the log');
    });
  });
}
