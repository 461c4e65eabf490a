// The Token API over HTTP (API.md 9): the public lookup, listing, creating and deleting tokens with the session cookie, narrowing to the account's rights.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { assertError, call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { ADMIN_PASSWORD, codeOf, login, send } from '../helpers/sessions.js';
import { issueToken } from '../helpers/tokens.js';

interface TokenRecord {
  tid: string; aid: string; cid: string; urm: Record<string, Record<string, Array<Record<string, unknown>>>>;
  iat: number; exp?: number; limits: Record<string, unknown>; description: string; awsPlanId: string; metadata: Record<string, unknown>;
  token?: string;
}

const PASSWORD = 'user-password-4567';
const FIELDS = ['aid', 'awsPlanId', 'cid', 'description', 'iat', 'limits', 'metadata', 'tid', 'urm'];
const now = () => Math.floor(Date.now() / 1000);

for (const backend of BACKENDS) {
  describe(`Token API (${backend})`, () => {
    let hub: HubProcess;
    let admin: string;
    let adminId: string;
    let counter = 0;
    const secrets = new Set<string>([ADMIN_PASSWORD, PASSWORD]);

    async function createToken(cookie: string, body: Record<string, unknown> = {}): Promise<TokenRecord & { token: string }> {
      const response = await send(hub, 'POST', '/token-api/tokens', { cookie, body });
      assert.equal(response.status, 200, response.text);
      const record = response.json as TokenRecord & { token: string };
      secrets.add(record.token);
      secrets.add(createHash('sha256').update(record.token).digest('hex'));
      return record;
    }

    async function newUser(rights?: unknown): Promise<{ id: string; cookie: string }> {
      const username = `user-${++counter}`;
      const response = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, body: { username, password: PASSWORD, ...(rights ? { rights } : {}) } });
      assert.equal(response.status, 200, response.text);
      const cookie = await login(hub, username, PASSWORD);
      secrets.add(cookie.split('=')[1]);
      return { id: (response.json as { id: string }).id, cookie };
    }

    const bearer = (token: string) => ({ ...hub, token });

    before(async () => {
      hub = await startHub({ backend, env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD, HUB_LOG_LEVEL: 'trace' } });
      admin = await login(hub, 'admin', ADMIN_PASSWORD);
      secrets.add(admin.split('=')[1]);
      adminId = ((await send(hub, 'GET', '/account-api/me', { cookie: admin })).json as { id: string }).id;
    });
    after(() => hub.stop());

    test('POST creates a permanent token: the record with description and metadata echoed, plus a bearer string of URL-safe characters that works on /hub', async () => {
      const body = { cid: 'app-1', description: 'permanent token', metadata: { foo: 42 }, urm: { 'xyz-hub': { readFeatures: [{}], manageSpaces: [{}] } } };
      const record = await createToken(admin, body);
      assert.match(record.token, /^[A-Za-z0-9._~-]+$/);
      for (const field of FIELDS) assert.ok(field in record, `the record has ${field}`);
      assert.equal(record.exp, undefined, 'permanent');
      assert.equal(record.aid, adminId);
      assert.equal(record.cid, 'app-1');
      assert.equal(record.description, 'permanent token');
      assert.deepEqual(record.metadata, { foo: 42 });
      assert.deepEqual(record.urm, body.urm, 'an admin token gets what it asks for');
      assert.ok(Math.abs(record.iat - now()) < 600);
      assert.equal((await call(bearer(record.token), 'GET', '/hub/spaces')).status, 200);
    });

    test('POST with exp creates a temporary token carrying exp', async () => {
      const exp = now() + 7200;
      const record = await createToken(admin, { exp, description: 'temporary token', urm: { 'xyz-hub': { readFeatures: [{}] } } });
      assert.equal(record.exp, exp);
      const looked = await send(hub, 'GET', `/token-api/tokens/${record.token}.json`);
      assert.equal((looked.json as TokenRecord).exp, exp);
    });

    test('GET /token-api/tokens/{token}.json and /{token} need no credentials and show the record without the secret', async () => {
      const record = await createToken(admin, { description: 'public lookup' });
      for (const path of [`/token-api/tokens/${record.token}.json`, `/token-api/tokens/${record.token}`]) {
        const response = await send(hub, 'GET', path);
        assert.equal(response.status, 200, response.text);
        const shown = response.json as TokenRecord;
        assert.equal(shown.tid, record.tid);
        assert.equal(shown.description, 'public lookup');
        assert.equal(shown.token, undefined);
        assert.ok(!response.text.includes(record.token));
      }
    });

    test('the public lookup answers 412 text/plain "tokenId is not valid" for a malformed, unknown, expired or deleted token, and for a tid', async () => {
      const expired = await issueToken(hub, { aid: 'fixture-owner', urm: { 'xyz-hub': { readFeatures: [{}] } }, exp: now() - 10 });
      const deleted = await createToken(admin);
      assert.equal((await send(hub, 'DELETE', `/token-api/tokens/${deleted.token}`, { cookie: admin })).status, 204);
      const live = await createToken(admin);
      const ids = ['unknown-token-0123456789', 'has%20space', '%21%21%21', 'x'.repeat(300), `${expired.token}.json`, deleted.token, live.tid];
      for (const id of ids) {
        const response = await send(hub, 'GET', `/token-api/tokens/${id}`);
        assert.equal(response.status, 412, `${id}: ${response.text}`);
        assert.equal(response.text, 'tokenId is not valid');
        assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
      }
    });

    test('GET /token-api/tokens lists the account\'s own tokens with the cookie alone, never a secret', async () => {
      const user = await newUser();
      const first = await createToken(user.cookie, { description: 'one' });
      const second = await createToken(user.cookie, { description: 'two', exp: now() + 3600 });
      const response = await send(hub, 'GET', '/token-api/tokens', { cookie: user.cookie });
      assert.equal(response.status, 200, response.text);
      const list = response.json as TokenRecord[];
      assert.deepEqual(list.map((entry) => entry.tid).sort(), [first.tid, second.tid].sort());
      for (const entry of list) {
        for (const field of FIELDS) assert.ok(field in entry, `a list entry has ${field}`);
        assert.equal(entry.aid, user.id);
        assert.equal(entry.token, undefined);
      }
      assert.equal(list.find((entry) => entry.tid === second.tid)?.exp, second.exp);
      assert.ok(!response.text.includes(first.token) && !response.text.includes(second.token));
      assert.ok(!(await send(hub, 'GET', '/token-api/tokens', { cookie: admin })).text.includes(first.tid), 'the admin\'s list holds its own tokens only');
    });

    test('without a session the list, creation and deletion answer 401 {"message":"Unauthorized"}; a bearer token is no session', async () => {
      const record = await createToken(admin);
      const requests: Array<[string, string, Record<string, unknown>]> = [
        ['GET', '/token-api/tokens', {}],
        ['POST', '/token-api/tokens', { body: {} }],
        ['DELETE', `/token-api/tokens/${record.token}`, {}],
        ['GET', '/token-api/tokens', { headers: { authorization: `Bearer ${record.token}` } }],
        ['GET', '/token-api/tokens', { cookie: 'hub_session=unknown' }],
      ];
      for (const [method, path, options] of requests) {
        const response = await send(hub, method, path, options);
        assert.equal(response.status, 401, `${method} ${path}: ${response.text}`);
        assert.equal((response.json as { message: string }).message, 'Unauthorized');
      }
      assert.equal((await call(bearer(record.token), 'GET', '/hub/spaces')).status, 200, 'the token was not deleted');
    });

    test('DELETE by token or by tid answers 204 with an empty body, and the token stops working at once', async () => {
      for (const by of ['token', 'tid'] as const) {
        const record = await createToken(admin);
        assert.equal((await call(bearer(record.token), 'GET', '/hub/spaces')).status, 200, 'cached on this node');
        const response = await send(hub, 'DELETE', `/token-api/tokens/${record[by]}`, { cookie: admin });
        assert.equal(response.status, 204, response.text);
        assert.equal(response.text, '');
        const after = await call(bearer(record.token), 'GET', '/hub/spaces');
        assert.equal(after.status, 401, `deleted by ${by}: ${after.text}`);
        const again = await send(hub, 'DELETE', `/token-api/tokens/${record[by]}`, { cookie: admin });
        assert.equal(again.status, 404);
        assert.equal(again.text, 'Token not found');
        assert.match(again.headers.get('content-type') ?? '', /^text\/plain/);
      }
    });

    test('DELETE of an unknown token, or of another account\'s token, answers 404 "Token not found" and deletes nothing', async () => {
      const user = await newUser();
      const adminToken = await createToken(admin);
      for (const id of ['unknown-token-0123456789', adminToken.token, adminToken.tid, 'bad%20id']) {
        const response = await send(hub, 'DELETE', `/token-api/tokens/${id}`, { cookie: user.cookie });
        assert.equal(response.status, 404, `${id}: ${response.text}`);
        assert.equal(response.text, 'Token not found');
      }
      assert.equal((await call(bearer(adminToken.token), 'GET', '/hub/spaces')).status, 200);
    });

    test('an expired token stops working at once', async () => {
      const expired = await issueToken(hub, { aid: 'fixture-owner', urm: { 'xyz-hub': { readFeatures: [{}] } }, exp: now() - 1 });
      assert.equal((await call(bearer(expired.token), 'GET', '/hub/spaces')).status, 401);
    });

    test('limits.maxRequestsPerMinute set through POST throttles the token: 429 tokenRateLimited with Retry-After past the rate', async () => {
      const user = await newUser();
      const record = await createToken(user.cookie, { limits: { maxRequestsPerMinute: 3, maxSpaces: 5 } });
      assert.deepEqual(record.limits, { maxRequestsPerMinute: 3, maxSpaces: 5 });
      assert.deepEqual(((await send(hub, 'GET', `/token-api/tokens/${record.token}`)).json as TokenRecord).limits, record.limits);
      for (let i = 0; i < 3; i++) assert.equal((await call(bearer(record.token), 'GET', '/hub/spaces')).status, 200, `request ${i + 1}`);
      const refused = await call(bearer(record.token), 'GET', '/hub/spaces');
      assertError(refused, 429, 'tokenRateLimited', '3 requests a minute');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1, String(refused.headers.get('retry-after')));
      const unlimited = await createToken(user.cookie, { limits: { maxRequestsPerMinute: -1 } });
      for (let i = 0; i < 5; i++) assert.equal((await call(bearer(unlimited.token), 'GET', '/hub/spaces')).status, 200, '-1 is unlimited');
    });

    test('a non-admin account\'s token is narrowed to its own spaces plus its granted rights; the stored and returned urm is the effective one', async () => {
      const granted = { 'xyz-hub': { readFeatures: [{ owner: adminId, space: 'shared-*' }], useCapabilities: [{ id: 'hexbinClustering' }] } };
      const user = await newUser(granted);
      const record = await createToken(user.cookie, {
        urm: { 'xyz-hub': { readFeatures: [{}], manageSpaces: [{}], deleteFeatures: [{ owner: adminId }], useCapabilities: [{ id: 'hexbinClustering' }] } },
      });
      const expected = { 'xyz-hub': {
        readFeatures: [{ owner: user.id }, { owner: adminId, space: 'shared-*' }],
        manageSpaces: [{ owner: user.id }],
        useCapabilities: [{ id: 'hexbinClustering', owner: user.id }, { id: 'hexbinClustering' }],
      } };
      assert.deepEqual(record.urm, expected);
      assert.deepEqual((await send(hub, 'GET', `/token-api/tokens/${record.token}`)).json, (({ token: _token, ...rest }) => rest)(record));
      const tokens = (await send(hub, 'GET', '/token-api/tokens', { cookie: user.cookie })).json as TokenRecord[];
      assert.deepEqual(tokens.find((entry) => entry.tid === record.tid)?.urm, expected);

      const everything = await createToken(user.cookie);
      assert.deepEqual(Object.keys(everything.urm['xyz-hub']).sort(),
        ['accessConnectors', 'adminSpaces', 'createFeatures', 'deleteFeatures', 'manageConnectors', 'managePackages', 'manageSpaces',
          'readFeatures', 'updateFeatures', 'useAdminCapabilities', 'useCapabilities'], 'no urm asks for all the account may');
      assert.deepEqual(everything.urm['xyz-hub'].createFeatures, [{ owner: user.id }]);

      const adminSpace = await call(hub, 'POST', '/hub/spaces', { body: { title: 'the admin\'s' } });
      assert.equal(adminSpace.status, 200, adminSpace.text);
      const own = await call(bearer(everything.token), 'POST', '/hub/spaces', { body: { title: 'the user\'s' } });
      assert.equal(own.status, 200, own.text);
      assert.equal((await call(bearer(everything.token), 'GET', `/hub/spaces/${own.body.id as string}`)).status, 200);
      const listed = await call(bearer(everything.token), 'GET', '/hub/spaces');
      assert.deepEqual((listed.body as unknown as Array<{ id: string }>).map((space) => space.id), [own.body.id],
        `the token lists its own space, not ${adminSpace.body.id as string} of the admin`);
      // Asked for everything, the token still cannot reach the admin's private space.
      assert.equal((await call(bearer(everything.token), 'GET', `/hub/spaces/${adminSpace.body.id as string}`)).status, 403);
      assert.equal((await call(bearer(everything.token), 'GET', `/hub/spaces/${adminSpace.body.id as string}/search`)).status, 403);
      assert.equal((await call(bearer(record.token), 'DELETE', `/hub/spaces/${adminSpace.body.id as string}/features?tags=*`)).status, 403,
        'deleteFeatures on the admin\'s spaces was asked for and narrowed away');
    });

    test('bad creation input answers 400 naming the field, 415 for a body that is not JSON, 413 when oversized; nothing is created', async () => {
      const user = await newUser();
      const bad: Array<Record<string, unknown>> = [
        { exp: now() - 60 },
        { exp: now() },
        { exp: '2000000000' },
        { exp: 1.5e9 + 0.5 },
        { urm: [] },
        { urm: 'all' },
        { urm: { 'xyz-hub': [] } },
        { urm: { 'xyz-hub': { readFeatures: {} } } },
        { urm: { 'xyz-hub': { readFeatures: [null] } } },
        { urm: { 'xyz-hub': { readFeatures: [{ owner: { any: 1 } }] } } },
        { limits: { maxSpaces: 'ten' } },
        { limits: { maxSpaces: -2 } },
        { limits: { unknownLimit: 1 } },
        { limits: { maxRequestsPerMinute: 0 } },
        { limits: { maxRequestsPerMinute: -2 } },
        { limits: { maxRequestsPerMinute: 2.5 } },
        { limits: { maxRequestsPerMinute: '60' } },
        { limits: { maxRequestsPerMinute: null } },
        { limits: 5 },
        { metadata: 'x' },
        { metadata: [1] },
        { description: 42 },
        { description: 'x'.repeat(1001) },
        { cid: ['app'] },
        { awsPlanId: 7 },
        { expires: now() + 3600 },
      ];
      for (const body of bad) {
        const response = await send(hub, 'POST', '/token-api/tokens', { cookie: user.cookie, body });
        assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
        assert.equal(codeOf(response), 'invalidTokenInput');
      }
      const raw: Array<[Record<string, unknown>, number, string]> = [
        [{ rawBody: '{"exp": ' }, 400, 'invalidJsonBody'],
        [{ rawBody: '[]' }, 400, 'invalidJsonBody'],
        [{ rawBody: '' }, 400, 'invalidJsonBody'],
        [{ rawBody: '{}', headers: { 'content-type': 'text/plain' } }, 415, 'jsonBodyRequired'],
        [{ rawBody: 'description=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'jsonBodyRequired'],
        [{ body: { description: 'x'.repeat(70_000) } }, 413, 'payloadTooLarge'],
      ];
      for (const [options, status, code] of raw) {
        const response = await send(hub, 'POST', '/token-api/tokens', { cookie: user.cookie, ...options });
        assert.equal(response.status, status, `${JSON.stringify(options).slice(0, 80)}: ${response.text}`);
        assert.equal(codeOf(response), code);
      }
      assert.deepEqual((await send(hub, 'GET', '/token-api/tokens', { cookie: user.cookie })).json, [], 'nothing was created');
    });

    test('cookie-authenticated writes from another origin are refused with 403 and change nothing', async () => {
      const record = await createToken(admin);
      const evil = { origin: 'https://evil.example' };
      const before = ((await send(hub, 'GET', '/token-api/tokens', { cookie: admin })).json as TokenRecord[]).length;
      const create = await send(hub, 'POST', '/token-api/tokens', { cookie: admin, headers: evil, body: {} });
      assert.equal(create.status, 403, create.text);
      assert.equal(codeOf(create), 'crossSiteRequest');
      const remove = await send(hub, 'DELETE', `/token-api/tokens/${record.token}`, { cookie: admin, headers: evil });
      assert.equal(remove.status, 403, remove.text);
      const list = await send(hub, 'GET', '/token-api/tokens', { cookie: admin, headers: evil });
      assert.equal(list.status, 403, 'another origin cannot read the list either');
      assert.equal(((await send(hub, 'GET', '/token-api/tokens', { cookie: admin })).json as TokenRecord[]).length, before);
      assert.equal((await call(bearer(record.token), 'GET', '/hub/spaces')).status, 200);
    });

    test('no token, token hash, cookie or password appears in the hub\'s output at log level trace', () => {
      const output = hub.stdout + hub.stderr;
      assert.ok(secrets.size > 10);
      for (const secret of secrets) assert.ok(!output.includes(secret), `the hub output holds ${secret.slice(0, 4)}…`);
      assert.ok(!output.includes('hub_session='));
    });
  });
}
