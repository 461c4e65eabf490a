// Black-box tests of the service basics: health, unknown routes, methods, CORS, authentication, stream ids.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

for (const backend of BACKENDS) {
  describe(`service basics (${backend})`, () => {
    let hub: HubProcess;
    before(async () => { hub = await startHub({ backend }); });
    after(async () => { await hub.stop(); });

    for (const path of ['/hub', '/hub/', '/']) {
      test(`GET ${path} answers the health document without a token`, async () => {
        const response = await call(hub, 'GET', path, { anonymous: true });
        assert.equal(response.status, 200);
        assert.equal(response.body.schemaVersion, '0.9');
        assert.equal((response.body.reporter as { name: string }).name, 'Spatial Data Hub');
        assert.equal((response.body.status as { result: string }).result, 'OK');
      });
    }

    test('an unknown route gets 404 in the type:error shape', async () => {
      const response = await call(hub, 'GET', '/hub/invalid');
      assert.equal(response.status, 404);
      assert.ok(response.text.startsWith('{"type":"error",'));
      assert.equal(response.body.message, 'The requested resource does not exist.');
      assert.equal(response.body.code, 'routeNotFound');
    });

    test('a known path with a wrong method gets 405', async () => {
      const response = await call(hub, 'PUT', '/hub/spaces');
      assert.equal(response.status, 405);
      assert.equal(response.body.type, 'error');
    });

    test('no token gets 401 Missing auth credentials', async () => {
      const response = await call(hub, 'GET', '/hub/spaces', { anonymous: true });
      assert.equal(response.status, 401);
      assert.equal(response.body.type, 'error');
      assert.equal(response.body.message, 'Missing auth credentials.');
    });

    test('an unknown token gets 401', async () => {
      const response = await call(hub, 'GET', '/hub/spaces', { headers: { authorization: 'Bearer nope-not-a-token' } });
      assert.equal(response.status, 401);
      assert.equal(response.body.code, 'invalidCredentials');
    });

    test('the token is accepted as access_token when the header is absent', async () => {
      const response = await call(hub, 'GET', `/hub/spaces?access_token=${hub.token}`, { anonymous: true });
      assert.equal(response.status, 200);
      assert.ok(Array.isArray(response.body) || response.text.startsWith('['));
    });

    test('an OPTIONS preflight is answered 204 with CORS headers and no token', async () => {
      const response = await call(hub, 'OPTIONS', '/hub/spaces/x/features', {
        anonymous: true,
        headers: { origin: 'http://maps.example', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'authorization,content-type' },
      });
      assert.equal(response.status, 204);
      assert.equal(response.headers.get('access-control-allow-origin'), 'http://maps.example');
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE']) {
        assert.ok(response.headers.get('access-control-allow-methods')?.includes(method), method);
      }
      const allowed = response.headers.get('access-control-allow-headers')?.toLowerCase() ?? '';
      for (const header of ['authorization', 'content-type', 'accept']) assert.ok(allowed.includes(header), header);
    });

    test('errors carry CORS headers too', async () => {
      const response = await call(hub, 'GET', '/hub/spaces', { anonymous: true, headers: { origin: 'http://maps.example' } });
      assert.equal(response.status, 401);
      assert.equal(response.headers.get('access-control-allow-origin'), 'http://maps.example');
    });

    test('Stream-Id is echoed, generated otherwise, and repeated in error bodies', async () => {
      const echoed = await call(hub, 'GET', '/hub/spaces/unknown-space', { headers: { 'stream-id': 'abc123' } });
      assert.equal(echoed.headers.get('stream-id'), 'abc123');
      assert.equal(echoed.body.streamId, 'abc123');
      const generated = await call(hub, 'GET', '/hub');
      assert.match(generated.headers.get('stream-id') ?? '', /^[A-Za-z0-9]{10}$/);
    });
  });
}
