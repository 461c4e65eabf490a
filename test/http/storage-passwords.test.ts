// PostgreSQL only: the password in HUB_STORAGE never appears in the hub's output, whatever characters it holds, also when pg cannot read the URL.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { call } from '../helpers/http-client.js';
import { BACKENDS, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-cluster.js';

const skip = BACKENDS.includes('postgres') ? false : 'the postgres backend is not in this run (see HUB_TEST_BACKENDS)';

/** The test clusters trust local connections: any password connects, so the hub starts with whichever the test gives. */
function withPassword(url: string, password: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.username}:${password}@${parsed.host}${parsed.pathname}`;
}

describe('the storage password in the output', { skip }, () => {
  let database: TestDatabase;

  before(async () => { database = await createTestDatabase(); });
  after(() => database.remove());

  test('a password with @, : and %40 is hidden at start-up and in the log, and the hub connects with it', async () => {
    // pg reads the password as Sekr3t@Word:w1th@x (the last @ before the host ends it).
    const storage = withPassword(database.url, 'Sekr3t@Word:w1th%40x');
    const hub = await startHub({ backend: 'postgres', storage, env: { HUB_LOG_LEVEL: 'trace' } });
    try {
      assert.equal((await call(hub, 'GET', '/hub/spaces')).status, 200);
    } finally {
      await hub.stop();
    }
    const output = hub.stdout + hub.stderr;
    assert.match(output, /"HUB_STORAGE":"postgres:\/\/[^:"]+:\*\*\*@127\.0\.0\.1:\d+\//, output);
    for (const part of ['Sekr3t', 'Word', 'w1th', '%40x']) assert.ok(!output.includes(part), `the output holds ${part}:\n${output}`);
  });

  test('a URL pg cannot read (a / in the password) stops the start with a message that holds no part of the password', async () => {
    const storage = withPassword(database.url, 'Sekr3t/Word');
    const failed = await startHub({ backend: 'postgres', storage }).then(
      async (hub) => { await hub.stop(); return 'started'; },
      (error: unknown) => (error as Error).message);
    assert.notEqual(failed, 'started');
    assert.match(failed, /Cannot read postgres:\/\/\*\*\*@127\.0\.0\.1:\d+\/\w+ as a connection URL: .*percent-encoded/, failed);
    for (const part of ['Sekr3t', 'Word']) assert.ok(!failed.includes(part), `the output holds ${part}:\n${failed}`);
  });
});
