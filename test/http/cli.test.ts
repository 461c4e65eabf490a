// The spatial-hub commands next to serve (account add/list/passwd, token create), run as child processes on the storage of a running hub.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { assertError, call } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, MAIN, startHub } from '../helpers/hub-process.js';
import { ADMIN_PASSWORD, login, send } from '../helpers/sessions.js';

const PASSWORD = 'cli-password-0123';

interface Run { code: number | null; stdout: string; stderr: string }

function run(args: string[], options: { stdin?: string; env?: Record<string, string> } = {}): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN, ...args], { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.stdin ?? '');
  });
}

for (const backend of BACKENDS) {
  describe(`spatial-hub commands (${backend})`, () => {
    let hub: HubProcess;
    const storage = () => ['--storage', hub.storage];

    before(async () => {
      hub = await startHub({ backend, env: { HUB_ADMIN_PASSWORD: ADMIN_PASSWORD } });
    });
    after(() => hub.stop());

    test('account add reads the password from stdin; the account logs in over HTTP', async () => {
      const result = await run(['account', 'add', 'bob', ...storage()], { stdin: `${PASSWORD}\n` });
      assert.equal(result.code, 0, result.stderr);
      const account = JSON.parse(result.stdout) as { username: string; admin: boolean };
      assert.equal(account.username, 'bob');
      assert.equal(account.admin, false);
      assert.ok(!result.stdout.includes(PASSWORD) && !/scrypt/.test(result.stdout));
      const cookie = await login(hub, 'bob', PASSWORD);
      assert.equal(((await send(hub, 'GET', '/account-api/me', { cookie })).json as { username: string }).username, 'bob');
    });

    test('account add --admin takes the password from HUB_ACCOUNT_PASSWORD; the admin can create accounts over HTTP', async () => {
      const result = await run(['account', 'add', 'root2', '--admin', ...storage()], { env: { HUB_ACCOUNT_PASSWORD: PASSWORD } });
      assert.equal(result.code, 0, result.stderr);
      assert.equal((JSON.parse(result.stdout) as { admin: boolean }).admin, true);
      const cookie = await login(hub, 'root2', PASSWORD);
      const created = await send(hub, 'POST', '/account-api/accounts', { cookie, body: { username: 'made-by-root2', password: PASSWORD } });
      assert.equal(created.status, 200, created.text);
    });

    test('account add refuses a taken username, a short password and a malformed --rights with exit code 2', async () => {
      const cases: Array<[string[], string, RegExp]> = [
        [['account', 'add', 'admin'], PASSWORD, /exists/],
        [['account', 'add', 'carol'], 'short', /password/],
        [['account', 'add', 'carol', '--rights', '{not json'], PASSWORD, /--rights takes JSON/],
        [['account', 'add', 'carol', '--rights', '[]'], PASSWORD, /rights/],
        [['account', 'add'], PASSWORD, /one username/],
        [['account', 'add', 'has space'], PASSWORD, /username/],
        [['account', 'frobnicate'], PASSWORD, /Unknown command/],
      ];
      for (const [args, password, message] of cases) {
        const result = await run([...args, ...storage()], { stdin: `${password}\n` });
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout} ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.ok(!result.stderr.includes(password) || password === 'short');
      }
      assert.equal((await send(hub, 'POST', '/account-api/login', { body: { username: 'carol', password: PASSWORD } })).status, 401);
    });

    test('account list shows every account, one JSON line each, without password data', async () => {
      const result = await run(['account', 'list', ...storage()]);
      assert.equal(result.code, 0, result.stderr);
      const accounts = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { username: string });
      const names = accounts.map((account) => account.username);
      assert.ok(names.includes('admin') && names.includes('bob'), names.join(','));
      assert.ok(!/scrypt|password/i.test(result.stdout));
    });

    test('account passwd sets a new password and ends the account\'s sessions; an unknown account is exit code 2', async () => {
      await run(['account', 'add', 'dave', ...storage()], { stdin: `${PASSWORD}\n` });
      const cookie = await login(hub, 'dave', PASSWORD);
      const result = await run(['account', 'passwd', 'dave', ...storage()], { stdin: 'new-password-9876\n' });
      assert.equal(result.code, 0, result.stderr);
      assert.equal((await send(hub, 'GET', '/account-api/me', { cookie })).status, 401, 'the old session ended');
      assert.equal((await send(hub, 'POST', '/account-api/login', { body: { username: 'dave', password: PASSWORD } })).status, 401);
      await login(hub, 'dave', 'new-password-9876');
      const unknown = await run(['account', 'passwd', 'nobody', ...storage()], { stdin: 'new-password-9876\n' });
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /No account/);
    });

    test('token create issues a narrowed token for the account, usable as bearer and listed in its Token API', async () => {
      const add = await run(['account', 'add', 'erin', ...storage()], { stdin: `${PASSWORD}\n` });
      const erin = JSON.parse(add.stdout) as { id: string };
      const exp = Math.floor(Date.now() / 1000) + 3600;
      const result = await run(['token', 'create', 'erin', '--urm', '{"xyz-hub": {"readFeatures": [{}], "manageSpaces": [{}]}}',
        '--exp', String(exp), '--description', 'from the command line', ...storage()]);
      assert.equal(result.code, 0, result.stderr);
      const record = JSON.parse(result.stdout) as { token: string; tid: string; aid: string; exp: number; description: string; urm: unknown };
      assert.match(record.token, /^[A-Za-z0-9._~-]+$/);
      assert.equal(record.aid, erin.id);
      assert.equal(record.exp, exp);
      assert.equal(record.description, 'from the command line');
      assert.deepEqual(record.urm, { 'xyz-hub': { readFeatures: [{ owner: erin.id }], manageSpaces: [{ owner: erin.id }] } });
      const space = await call({ ...hub, token: record.token }, 'POST', '/hub/spaces', { body: { title: 'erin\'s' } });
      assert.equal(space.status, 200, space.text);
      const cookie = await login(hub, 'erin', PASSWORD);
      const tokens = (await send(hub, 'GET', '/token-api/tokens', { cookie })).json as Array<{ tid: string }>;
      assert.deepEqual(tokens.map((token) => token.tid), [record.tid]);
    });

    test('token create --limits sets maxRequestsPerMinute: the token gets 429 tokenRateLimited with Retry-After past the rate', async () => {
      await run(['account', 'add', 'frank', ...storage()], { stdin: `${PASSWORD}\n` });
      const result = await run(['token', 'create', 'frank', '--limits', '{"maxRequestsPerMinute": 2}', ...storage()]);
      assert.equal(result.code, 0, result.stderr);
      const record = JSON.parse(result.stdout) as { token: string; limits: unknown };
      assert.deepEqual(record.limits, { maxRequestsPerMinute: 2 });
      const limited = { ...hub, token: record.token };
      for (let i = 0; i < 2; i++) assert.equal((await call(limited, 'GET', '/hub/spaces')).status, 200, `request ${i + 1}`);
      const refused = await call(limited, 'GET', '/hub/spaces');
      assertError(refused, 429, 'tokenRateLimited', '2 requests a minute');
      assert.ok(Number(refused.headers.get('retry-after')) >= 1, String(refused.headers.get('retry-after')));
    });

    test('token create refuses an unknown account, an exp in the past or not a number, and malformed urm or limits with exit code 2', async () => {
      const cases: Array<[string[], RegExp]> = [
        [['token', 'create', 'nobody'], /No account/],
        [['token', 'create', 'bob', '--exp', '1000'], /exp/],
        [['token', 'create', 'bob', '--exp', 'tomorrow'], /exp/],
        [['token', 'create', 'bob', '--urm', '{"xyz-hub": []}'], /urm/],
        [['token', 'create', 'bob', '--urm'], /Missing value/],
        [['token', 'create', 'bob', '--limits', '{maxRequestsPerMinute: 5}'], /--limits takes JSON, e\.g\. --limits '\{"maxRequestsPerMinute"/],
        [['token', 'create', 'bob', '--limits', '{"maxRequestsPerMinute": 0}'], /maxRequestsPerMinute must be a whole number of at least 1, or -1/],
        [['token', 'create', 'bob', '--limits', '{"maxRequestsPerMinute": "60"}'], /maxRequestsPerMinute/],
        [['token', 'create', 'bob', '--limits', '{"maxRequestsPerMinut": 60}'], /unknown limit/],
        [['token', 'create', 'bob', '--limits', '60'], /limits/],
      ];
      for (const [args, message] of cases) {
        const result = await run([args[0], args[1], ...storage(), ...args.slice(2)]);
        assert.equal(result.code, 2, `${args.join(' ')}: ${result.stdout} ${result.stderr}`);
        assert.match(result.stderr, message);
        assert.equal(result.stdout, '');
      }
    });
  });
}

describe('spatial-hub serve', () => {
  test('`serve` serves as the command without one does', async () => {
    const hub = await startHub({ backend: BACKENDS[0], args: ['serve'] });
    try {
      assert.equal((await call(hub, 'GET', '/hub/spaces')).status, 200);
    } finally {
      await hub.stop();
    }
  });
});
