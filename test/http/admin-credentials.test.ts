// The admin credentials made at start-up: generated ones stay out of logs, and a new HUB_ADMIN_TOKEN replaces the previous one.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { call, createSpace } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, MAIN, startFlags, startHub } from '../helpers/hub-process.js';

const TOKEN_A = 'admin-token-A_0123456789';
const TOKEN_B = 'admin-token-B_9876543210';

/** The hub answering requests with another bearer token. */
const as = (hub: HubProcess, token: string): HubProcess => ({ ...hub, token });

async function assertRejected(hub: HubProcess, token: string): Promise<void> {
  const response = await call(as(hub, token), 'GET', '/hub/spaces');
  assert.equal(response.status, 401, response.text);
  assert.equal(response.body.code, 'invalidCredentials');
}

async function assertAdmin(hub: HubProcess, token: string, space?: string): Promise<void> {
  const response = await call(as(hub, token), 'GET', '/hub/spaces');
  assert.equal(response.status, 200, response.text);
  if (space !== undefined) {
    assert.ok((response.body as unknown as Array<{ id: string }>).some((entry) => entry.id === space), 'the admin still sees its space');
  }
}

interface Credentials { user: string; password: string; token: string }

for (const backend of BACKENDS) {
  describe(`admin credentials (${backend})`, () => {
    test('a restart with another HUB_ADMIN_TOKEN revokes the previous one; a restart without one keeps it', async () => {
      let hub = await startHub({ backend, env: { HUB_ADMIN_TOKEN: TOKEN_A } });
      try {
        const space = await createSpace(hub);
        await hub.stop({ keepData: true });

        hub = await startHub({ backend, dataDir: hub.dataDir, env: { HUB_ADMIN_TOKEN: TOKEN_B } });
        await assertRejected(hub, TOKEN_A);
        await assertAdmin(hub, TOKEN_B, space);
        await hub.stop({ keepData: true });

        hub = await startHub({ backend, dataDir: hub.dataDir, env: { HUB_ADMIN_TOKEN: undefined } });
        await assertAdmin(hub, TOKEN_B, space);
        await assertRejected(hub, TOKEN_A);
      } finally {
        await hub.stop();
      }
    });

    test('generated credentials go to an owner-only file named on stdout, never to the output of a non-terminal', async () => {
      let hub = await startHub({ backend, env: { HUB_ADMIN_TOKEN: undefined, HUB_ADMIN_PASSWORD: undefined } });
      try {
        const file = join(hub.dataDir, 'admin-credentials.json');
        assert.equal(statSync(file).mode & 0o777, 0o600);
        const credentials = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
        assert.equal(credentials.user, 'admin');
        assert.ok(credentials.password.length > 0 && credentials.token.length > 0);
        assert.ok(hub.stdout.includes(file), `stdout names the file:\n${hub.stdout}`);
        for (const secret of [credentials.password, credentials.token]) {
          assert.ok(!hub.stdout.includes(secret) && !hub.stderr.includes(secret), 'no generated secret in the output');
        }
        await assertAdmin(hub, credentials.token);
        await hub.stop({ keepData: true });

        // The generated token is a bootstrap token as well: a configured one replaces it.
        hub = await startHub({ backend, dataDir: hub.dataDir, env: { HUB_ADMIN_TOKEN: TOKEN_A } });
        await assertRejected(hub, credentials.token);
        await assertAdmin(hub, TOKEN_A);
      } finally {
        await hub.stop();
      }
    });
  });
}

/** util-linux `script` runs a command on a pseudo-terminal: the one way to give the hub a terminal as stdout. */
const SCRIPT = '/usr/bin/script';

describe('admin credentials on a terminal', { skip: existsSync(SCRIPT) ? false : `no ${SCRIPT} to run the hub on a terminal` }, () => {
  test('generated credentials are shown once when stdout is a terminal', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'hub-test-'));
    const hubCommand = [process.execPath, ...startFlags(), MAIN, '--port', '0', '--data-dir', dataDir]
      .map((word) => `'${word}'`).join(' ');
    const env: NodeJS.ProcessEnv = { ...process.env, HUB_LOG_LEVEL: 'warn' };
    delete env.HUB_ADMIN_TOKEN;
    delete env.HUB_ADMIN_PASSWORD;
    // Closing the terminal (script ends) hangs up the hub.
    const terminal = spawn(SCRIPT, ['-qfec', hubCommand, '/dev/null'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => terminal.once('exit', () => resolve()));
    try {
      let output = '';
      await new Promise<void>((resolve, reject) => {
        terminal.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (output.includes('Listening on')) resolve();
        });
        terminal.once('exit', (code) => reject(new Error(`the hub exited with ${code} before listening:\n${output}`)));
      });
      const file = join(dataDir, 'admin-credentials.json');
      const credentials = JSON.parse(readFileSync(file, 'utf8')) as Credentials;
      assert.ok(output.includes(`password: ${credentials.password}`), output);
      assert.ok(output.includes(`token:    ${credentials.token}`), output);
      assert.ok(output.includes(file));
    } finally {
      terminal.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
