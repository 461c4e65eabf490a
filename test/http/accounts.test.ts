// Accounts over HTTP (API.md 9.1): login and its cookie, logout, sessions on every node, account creation, throttling, cross-site refusals, secrets kept out of logs.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hashToken } from '../../src/hub/access/secrets.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { ADMIN_PASSWORD, codeOf, login, send } from '../helpers/sessions.js';

interface Account { id: string; username: string; admin: boolean; createdAt: number; [member: string]: unknown }

const PASSWORD = 'user-password-4567';

for (const backend of BACKENDS) {
  describe(`accounts (${backend})`, () => {
    let hub: HubProcess;
    let admin: string;
    /** Every secret the tests used or got: none may appear in the hub's output. */
    const secrets = new Set<string>([ADMIN_PASSWORD, PASSWORD]);
    let counter = 0;
    const uniqueName = (prefix: string) => `${prefix}-${++counter}`;

    async function createAccount(extra: Record<string, unknown> = {}): Promise<Account> {
      const response = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, body: { username: uniqueName('user'), password: PASSWORD, ...extra } });
      assert.equal(response.status, 200, response.text);
      return response.json as Account;
    }

    async function loggedIn(username: string, password = PASSWORD): Promise<string> {
      const cookie = await login(hub, username, password);
      secrets.add(cookie.split('=')[1]);
      return cookie;
    }

    before(async () => {
      hub = await startHub({ backend, env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD, HUB_LOG_LEVEL: 'trace' } });
      admin = await loggedIn('admin', ADMIN_PASSWORD);
    });
    after(() => hub.stop());

    test('login answers 200 with the account (no password data) and an HttpOnly, SameSite=Lax, Path=/ cookie, not Secure over http', async () => {
      const response = await send(hub, 'POST', '/account-api/login', { body: { username: 'admin', password: ADMIN_PASSWORD } });
      assert.equal(response.status, 200, response.text);
      const account = response.json as Account;
      assert.equal(account.username, 'admin');
      assert.equal(account.admin, true);
      assert.deepEqual(Object.keys(account).sort(), ['admin', 'createdAt', 'id', 'username']);
      const setCookie = response.headers.getSetCookie().find((line) => line.startsWith('hub_session='));
      assert.ok(setCookie, 'a session cookie');
      secrets.add(setCookie.split(';')[0].split('=')[1]);
      const attributes = setCookie.split(';').slice(1).map((part) => part.trim().toLowerCase());
      assert.ok(attributes.includes('httponly'), setCookie);
      assert.ok(attributes.includes('samesite=lax'), setCookie);
      assert.ok(attributes.includes('path=/'), setCookie);
      assert.ok(attributes.includes('max-age=43200'), `the default lifetime, 12 h: ${setCookie}`);
      assert.ok(!attributes.includes('secure'), setCookie);
    });

    test('a wrong password or an unknown username answers 401, never a redirect, and sets no cookie', async () => {
      for (const body of [{ username: 'admin', password: 'wrong-password' }, { username: 'nobody-here', password: ADMIN_PASSWORD }]) {
        const response = await send(hub, 'POST', '/account-api/login', { body });
        assert.equal(response.status, 401, response.text);
        assert.equal(codeOf(response), 'loginFailed');
        assert.equal(response.cookie, undefined);
        assert.equal(response.headers.get('location'), null);
      }
    });

    test('bad login input answers 400 (missing or mistyped fields, bad JSON), 415 (not JSON) or 413 (oversized)', async () => {
      const cases: Array<[Record<string, unknown>, number, string]> = [
        [{ body: { password: 'x' } }, 400, 'invalidAccountInput'],
        [{ body: { username: 'admin' } }, 400, 'invalidAccountInput'],
        [{ body: { username: 42, password: 'x' } }, 400, 'invalidAccountInput'],
        [{ body: { username: 'admin', password: ['x'] } }, 400, 'invalidAccountInput'],
        [{ rawBody: '{"username": "admin", ' }, 400, 'invalidJsonBody'],
        [{ rawBody: '["admin"]' }, 400, 'invalidJsonBody'],
        [{ rawBody: '' }, 400, 'invalidJsonBody'],
        [{ rawBody: 'username=admin&password=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }, 415, 'jsonBodyRequired'],
        [{ body: { username: 'admin', password: ADMIN_PASSWORD }, headers: { 'content-type': 'text/plain' } }, 415, 'jsonBodyRequired'],
        [{ body: { username: 'admin', password: 'x'.repeat(100_000) } }, 413, 'payloadTooLarge'],
      ];
      for (const [options, status, code] of cases) {
        const response = await send(hub, 'POST', '/account-api/login', options);
        assert.equal(response.status, status, `${JSON.stringify(options).slice(0, 100)}: ${response.text}`);
        assert.equal(codeOf(response), code);
        assert.equal(response.cookie, undefined);
      }
    });

    test('GET /account-api/me returns the logged-in account; without a valid session it answers 401 Unauthorized', async () => {
      const me = await send(hub, 'GET', '/account-api/me', { cookie: admin });
      assert.equal(me.status, 200, me.text);
      assert.equal((me.json as Account).username, 'admin');
      for (const cookie of [undefined, 'hub_session=', 'hub_session=made-up-session-id', `hub_session=${'x'.repeat(500)}`]) {
        const response = await send(hub, 'GET', '/account-api/me', { cookie });
        assert.equal(response.status, 401, `${cookie}: ${response.text}`);
        assert.equal((response.json as { message: string }).message, 'Unauthorized');
        assert.equal(codeOf(response), 'notLoggedIn');
      }
      const bearer = await send(hub, 'GET', '/account-api/me', { headers: { authorization: `Bearer ${hub.token}` } });
      assert.equal(bearer.status, 401, 'a bearer token is no session');
    });

    test('a session stops working when it expires, whatever the cookie says', async () => {
      const adminId = ((await send(hub, 'GET', '/account-api/me', { cookie: admin })).json as Account).id;
      const storage = await openStorage(hub.storage, { pgPoolSize: 1 });
      try {
        const now = Date.now();
        await storage.sessions.create({ idHash: hashToken('expired-session-id'), accountId: adminId, expiresAt: now - 1000 }, now - 60_000);
        await storage.sessions.create({ idHash: hashToken('live-session-id'), accountId: adminId, expiresAt: now + 3_600_000 }, now);
      } finally {
        await storage.close();
      }
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: 'hub_session=expired-session-id' })).status, 401);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: 'hub_session=live-session-id' })).status, 200, 'the same way, a live one works');
    });

    test('logout ends the session (the cookie no longer works) and clears the cookie; a second logout answers 401', async () => {
      const cookie = await loggedIn('admin', ADMIN_PASSWORD);
      const out = await send(hub, 'POST', '/account-api/logout', { cookie });
      assert.equal(out.status, 204, out.text);
      assert.equal(out.text, '');
      assert.equal(out.cookie, 'hub_session=', 'the cookie is cleared');
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie })).status, 401);
      assert.equal((await send(hub, 'POST', '/account-api/logout', { cookie })).status, 401);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: admin })).status, 200, 'other sessions go on');
    });

    test('session fixation: a login issues a new session id, and the session the request carried ends', async () => {
      const first = await loggedIn('admin', ADMIN_PASSWORD);
      const response = await send(hub, 'POST', '/account-api/login', { cookie: first, body: { username: 'admin', password: ADMIN_PASSWORD } });
      assert.equal(response.status, 200, response.text);
      assert.ok(response.cookie);
      secrets.add(response.cookie.split('=')[1]);
      assert.notEqual(response.cookie, first);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: first })).status, 401);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: response.cookie })).status, 200);

      const planted = await send(hub, 'POST', '/account-api/login', { cookie: 'hub_session=chosen-by-an-attacker', body: { username: 'admin', password: ADMIN_PASSWORD } });
      assert.ok(planted.cookie);
      secrets.add(planted.cookie.split('=')[1]);
      assert.notEqual(planted.cookie, 'hub_session=chosen-by-an-attacker');
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: 'hub_session=chosen-by-an-attacker' })).status, 401);
    });

    test('an admin creates accounts, which can log in; the answer holds no password data', async () => {
      const username = uniqueName('created');
      const rights = { 'xyz-hub': { readFeatures: [{ packages: 'OSM' }] } };
      const response = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, body: { username, password: PASSWORD, rights } });
      assert.equal(response.status, 200, response.text);
      const account = response.json as Account;
      assert.equal(account.username, username);
      assert.equal(account.admin, false);
      assert.deepEqual(account.rights, rights);
      assert.ok(!/password|scrypt/i.test(response.text), response.text);
      const cookie = await loggedIn(username);
      const me = await send(hub, 'GET', '/account-api/me', { cookie });
      assert.deepEqual(me.json, account);

      const second = await createAccount({ admin: true });
      assert.equal(second.admin, true);
    });

    test('account creation refuses a taken username (409), a non-admin (403), no session (401) and bad input (400)', async () => {
      const user = await createAccount();
      const taken = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, body: { username: user.username, password: PASSWORD } });
      assert.equal(taken.status, 409, taken.text);
      assert.equal(codeOf(taken), 'accountExists');

      const userCookie = await loggedIn(user.username);
      const byUser = await send(hub, 'POST', '/account-api/accounts', { cookie: userCookie, body: { username: uniqueName('x'), password: PASSWORD } });
      assert.equal(byUser.status, 403, byUser.text);
      assert.equal(codeOf(byUser), 'adminRequired');
      const anonymous = await send(hub, 'POST', '/account-api/accounts', { body: { username: uniqueName('x'), password: PASSWORD } });
      assert.equal(anonymous.status, 401, anonymous.text);

      const bad: Array<Record<string, unknown>> = [
        { password: PASSWORD },
        { username: '', password: PASSWORD },
        { username: 'has space', password: PASSWORD },
        { username: 'x'.repeat(65), password: PASSWORD },
        { username: uniqueName('x') },
        { username: uniqueName('x'), password: 'short' },
        { username: uniqueName('x'), password: 12345678 },
        { username: uniqueName('x'), password: PASSWORD, admin: 'yes' },
        { username: uniqueName('x'), password: PASSWORD, rights: [] },
        { username: uniqueName('x'), password: PASSWORD, rights: { 'xyz-hub': { readFeatures: {} } } },
        { username: uniqueName('x'), password: PASSWORD, rights: { 'xyz-hub': { readFeatures: ['owner'] } } },
        { username: uniqueName('x'), password: PASSWORD, rights: { 'xyz-hub': { readFeatures: [{ owner: { nested: true } }] } } },
      ];
      for (const body of bad) {
        const response = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, body });
        assert.equal(response.status, 400, `${JSON.stringify(body)}: ${response.text}`);
        assert.equal(codeOf(response), 'invalidAccountInput');
        if (typeof body.username === 'string' && body.username !== '') {
          assert.equal((await send(hub, 'POST', '/account-api/login', { body: { username: body.username, password: PASSWORD } })).status, 401, 'nothing was created');
        }
      }
    });

    test('a session request from another origin is refused with 403; the hub\'s own origin passes', async () => {
      const evil = { origin: 'https://evil.example' };
      const me = await send(hub, 'GET', '/account-api/me', { cookie: admin, headers: evil });
      assert.equal(me.status, 403, me.text);
      assert.equal(codeOf(me), 'crossSiteRequest');
      const username = uniqueName('csrf');
      const create = await send(hub, 'POST', '/account-api/accounts', { cookie: admin, headers: evil, body: { username, password: PASSWORD } });
      assert.equal(create.status, 403, create.text);
      assert.equal((await send(hub, 'POST', '/account-api/login', { body: { username, password: PASSWORD } })).status, 401, 'no account was made');
      const loginElsewhere = await send(hub, 'POST', '/account-api/login', { headers: { origin: 'null' }, body: { username: 'admin', password: ADMIN_PASSWORD } });
      assert.equal(loginElsewhere.status, 403, loginElsewhere.text);
      const logout = await send(hub, 'POST', '/account-api/logout', { cookie: admin, headers: evil });
      assert.equal(logout.status, 403);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie: admin })).status, 200, 'the cross-site logout changed nothing');

      const own = await send(hub, 'GET', '/account-api/me', { cookie: admin, headers: { origin: hub.url } });
      assert.equal(own.status, 200, own.text);
    });

    test('repeated failed logins for one username are refused with 429 and Retry-After, even with the right password; other usernames go on', async () => {
      const user = await createAccount();
      let refused;
      for (let attempt = 1; attempt <= 12; attempt++) {
        const response = await send(hub, 'POST', '/account-api/login', { body: { username: user.username, password: `wrong-${attempt}` } });
        if (response.status === 429) {
          refused = attempt;
          break;
        }
        assert.equal(response.status, 401, response.text);
      }
      assert.equal(refused, 11, 'ten failures are answered, the eleventh attempt is refused');
      const right = await send(hub, 'POST', '/account-api/login', { body: { username: user.username, password: PASSWORD } });
      assert.equal(right.status, 429, right.text);
      assert.equal(codeOf(right), 'tooManyLoginAttempts');
      assert.equal(right.cookie, undefined);
      const retryAfter = Number(right.headers.get('retry-after'));
      assert.ok(Number.isInteger(retryAfter) && retryAfter > 60 && retryAfter <= 900, `Retry-After ${right.headers.get('retry-after')}`);
      assert.ok(await loggedIn('admin', ADMIN_PASSWORD), 'another username logs in');
    });

    test('parallel failed logins cannot get past the limit together: of 15 at once, 10 are checked and 5 refused', async () => {
      const user = await createAccount();
      const answers = await Promise.all(Array.from({ length: 15 }, (_, i) =>
        send(hub, 'POST', '/account-api/login', { body: { username: user.username, password: `wrong-${i}` } })));
      const statuses = answers.map((answer) => answer.status).sort();
      assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(5).fill(429)]);
    });

    test('a successful login clears the failures of the username', async () => {
      const user = await createAccount();
      for (let round = 0; round < 3; round++) {
        for (let attempt = 0; attempt < 4; attempt++) {
          assert.equal((await send(hub, 'POST', '/account-api/login', { body: { username: user.username, password: 'wrong-password' } })).status, 401);
        }
        await loggedIn(user.username);
      }
    });

    test('no secret (password, cookie, password hash) is in the hub\'s output at log level trace, or in any account answer', async () => {
      const answers = [
        await send(hub, 'GET', '/account-api/me', { cookie: admin }),
        await send(hub, 'POST', '/account-api/login', { body: { username: 'admin', password: 'wrong-password' } }),
      ];
      for (const answer of answers) assert.ok(!/scrypt|password_hash|passwordHash/i.test(answer.text), answer.text);
      const output = hub.stdout + hub.stderr;
      assert.ok(output.length > 0);
      for (const secret of [...secrets, 'wrong-password', 'scrypt$', 'hub_session=']) {
        assert.ok(!output.includes(secret), `the hub output holds ${secret.slice(0, 4)}…`);
      }
    });
  });
}

describe('accounts over https (HUB_PUBLIC_URL)', () => {
  let hub: HubProcess;
  before(async () => {
    hub = await startHub({ backend: BACKENDS[0], env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD, HUB_PUBLIC_URL: 'https://hub.example.org/' } });
  });
  after(() => hub.stop());

  test('the session cookie is Secure, and only the public origin may send session requests', async () => {
    const response = await send(hub, 'POST', '/account-api/login', { headers: { origin: 'https://hub.example.org' }, body: { username: 'admin', password: ADMIN_PASSWORD } });
    assert.equal(response.status, 200, response.text);
    const setCookie = response.headers.getSetCookie().find((line) => line.startsWith('hub_session='));
    assert.ok(setCookie?.split(';').map((part) => part.trim().toLowerCase()).includes('secure'), setCookie);
    const cookie = response.cookie;
    assert.equal((await send(hub, 'GET', '/account-api/me', { cookie, headers: { origin: 'https://hub.example.org' } })).status, 200);
    const local = await send(hub, 'GET', '/account-api/me', { cookie, headers: { origin: hub.url } });
    assert.equal(local.status, 403, 'the address the hub listens on is not its public origin');
  });
});

describe('sessions on several nodes (postgres)', { skip: BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run' }, () => {
  test('a session made on one node works on another, and a logout on either ends it on both', async () => {
    const first = await startHub({ backend: 'postgres', env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    try {
      const second = await startHub({ backend: 'postgres', storage: first.storage, env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
      try {
        const cookie = await login(first, 'admin', ADMIN_PASSWORD);
        assert.equal((await send(second, 'GET', '/account-api/me', { cookie })).status, 200);
        assert.equal((await send(second, 'POST', '/account-api/logout', { cookie })).status, 204);
        assert.equal((await send(first, 'GET', '/account-api/me', { cookie })).status, 401);
        assert.equal((await send(second, 'GET', '/account-api/me', { cookie })).status, 401);

        const again = await login(second, 'admin', ADMIN_PASSWORD);
        assert.equal((await send(first, 'POST', '/account-api/logout', { cookie: again })).status, 204);
        assert.equal((await send(second, 'GET', '/account-api/me', { cookie: again })).status, 401);
      } finally {
        await second.stop({ keepData: true });
      }
    } finally {
      await first.stop();
    }
  });
});
