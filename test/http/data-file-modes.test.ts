// The SQLite database and its -wal and -shm files are readable by their owner only, when the hub creates them and when an older file let others read.
import assert from 'node:assert/strict';
import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { call, createSpace } from '../helpers/http-client.js';
import { collection, point } from '../helpers/features.js';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

const FILES = ['hub.db', 'hub.db-wal', 'hub.db-shm'];

/** Writes a feature, so that the WAL and its index exist, and returns the mode of each file while the hub runs. */
async function modesAfterWrite(hub: HubProcess): Promise<Record<string, string>> {
  const space = await createSpace(hub);
  const written = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(point('f1')) });
  assert.equal(written.status, 200, written.text);
  return Object.fromEntries(FILES.map((name) => [name, (statSync(join(hub.dataDir, name)).mode & 0o777).toString(8)]));
}

const OWNER_ONLY = Object.fromEntries(FILES.map((name) => [name, '600']));

describe('SQLite file modes', { skip: BACKENDS.includes('sqlite') ? false : 'the sqlite backend is not selected' }, () => {
  let umask: number;

  // The usual umask, under which SQLite on its own makes files 0644: a stricter one in the test's environment would hide the fault.
  before(() => { umask = process.umask(0o022); });
  after(() => { process.umask(umask); });

  test('a new hub creates hub.db, hub.db-wal and hub.db-shm owner-only (0600)', async () => {
    const hub = await startHub({ backend: 'sqlite' });
    try {
      assert.deepEqual(await modesAfterWrite(hub), OWNER_ONLY);
    } finally {
      await hub.stop();
    }
  });

  test('a start tightens a database and WAL files that others could read to 0600', async () => {
    let hub = await startHub({ backend: 'sqlite' });
    try {
      await modesAfterWrite(hub);
      // A crash leaves the WAL and its index behind, as an older version left them all readable to others.
      await hub.kill();
      for (const name of FILES) chmodSync(join(hub.dataDir, name), 0o644);
      hub = await startHub({ backend: 'sqlite', dataDir: hub.dataDir });
      assert.deepEqual(await modesAfterWrite(hub), OWNER_ONLY);
      assert.equal((await call(hub, 'GET', '/hub/spaces')).status, 200);
    } finally {
      await hub.stop();
    }
  });
});
