// `spatial-hub backup` under write load and `spatial-hub restore` into a fresh hub, which serves the backup's content at its version (docs/operations.md), on both engines.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { collection, point } from '../helpers/features.js';
import { call, createSpaceWith, type FeatureJson } from '../helpers/http-client.js';
import { BACKENDS, type HubProcess, MAIN, startFlags, startHub } from '../helpers/hub-process.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres-cluster.js';
import { issueToken } from '../helpers/tokens.js';


interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

function command(args: string[]): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...startFlags(), MAIN, ...args], { env: { ...process.env, HUB_LOG_LEVEL: 'warn' } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

/** The HEAD version of a space keeping history: every write of these tests writes features, so the newest feature version is HEAD. */
function headOf(features: FeatureJson[]): number {
  return Math.max(...features.map((feature) => (feature.properties['@ns:com:here:xyz'] as unknown as { version: number }).version));
}

/** The features of a space (at a version), by id, as plain JSON texts. */
async function contentOf(hub: HubProcess, space: string, version?: number): Promise<Map<string, string>> {
  const response = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=100000${version === undefined ? '' : `&version=${version}`}`);
  assert.equal(response.status, 200, response.text);
  return new Map((response.body.features ?? []).map((feature) => [feature.id, JSON.stringify(feature)]));
}

for (const backend of BACKENDS) {
  describe(`backup and restore (${backend})`, () => {
    let hub: HubProcess;
    let dir: string;
    before(async () => {
      hub = await startHub({ backend });
      dir = mkdtempSync(join(tmpdir(), 'hub-backup-'));
    });
    after(async () => {
      await hub.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('a backup taken while features are written restores into a fresh hub serving the same spaces, features (at the backup\'s version) and tokens', async () => {
      const space = await createSpaceWith(hub, Array.from({ length: 200 }, (_, i) => point(`f${i}`, { n: i, round: 0 }, [i / 100, i / 100])), { versionsToKeep: 10_000 });
      const reader = await issueToken(hub, { aid: 'backup-reader', urm: { 'xyz-hub': { readFeatures: [{}] } } });
      let writing = true;
      let rounds = 0;
      const writer = (async () => {
        while (writing || rounds < 3) {
          rounds++;
          const features = Array.from({ length: 20 }, (_, i) => point(`f${(rounds * 20 + i) % 200}`, { n: i, round: rounds }, [i / 10, rounds / 1000]));
          const put = await call(hub, 'PUT', `/hub/spaces/${space}/features`, { body: collection(...features) });
          assert.equal(put.status, 200, put.text);
        }
      })();
      while (rounds < 3) await new Promise((resolve) => setTimeout(resolve, 10));
      const file = join(dir, `${backend}.backup`);
      const roundsBefore = rounds;
      const backup = await command(['backup', file, '--storage', hub.storage]);
      const roundsDuring = rounds - roundsBefore;
      writing = false;
      rounds = 0;
      await writer;
      assert.equal(backup.code, 0, backup.stderr);
      assert.match(backup.stdout, /^Backed up /);
      assert.ok(statSync(file).size > 0);
      assert.equal(statSync(file).mode & 0o077, 0, 'the backup holds password and token hashes: owner only');

      const restoredDir = mkdtempSync(join(tmpdir(), 'hub-restored-'));
      let database: TestDatabase | undefined;
      let restoredHub: HubProcess | undefined;
      try {
        if (backend === 'postgres') database = await createTestDatabase();
        const location = database ? ['--storage', database.url] : ['--data-dir', restoredDir];
        const restore = await command(['restore', file, ...location]);
        assert.equal(restore.code, 0, restore.stderr);
        restoredHub = await startHub({ backend, dataDir: restoredDir, storage: database?.url });
        const restored = await contentOf(restoredHub, space);
        assert.equal(restored.size, 200);
        const version = headOf([...restored.values()].map((text) => JSON.parse(text) as FeatureJson));
        const live = await contentOf(hub, space);
        const latest = headOf([...live.values()].map((text) => JSON.parse(text) as FeatureJson));
        assert.ok(version < latest, `the backup (version ${version}) is older than the writes that went on after it (version ${latest}); ${roundsDuring} writes ran during the backup`);
        assert.deepEqual(restored, await contentOf(hub, space, version), `the restored space is the original at version ${version}`);
        const read = await call(restoredHub, 'GET', `/hub/spaces/${space}/features/f1`, { headers: { authorization: `Bearer ${reader.token}` } });
        assert.equal(read.status, 200, 'a token issued before the backup works on the restored hub');
        const spaces = await call(restoredHub, 'GET', '/hub/spaces');
        assert.ok((spaces.body as unknown as Array<{ id: string }>).some((one) => one.id === space));
        const again = await command(['restore', file, ...location]);
        assert.equal(again.code, 1);
        assert.match(again.stderr, /holds a hub already|exists: restore into a new/);
      } finally {
        await restoredHub?.stop({ keepData: true });
        await database?.remove();
        rmSync(restoredDir, { recursive: true, force: true });
      }
    });

    test('restore refuses a file that is not a backup, and backup names what is missing', async () => {
      const bogus = join(dir, 'not-a-backup');
      writeFileSync(bogus, 'hello');
      const target = mkdtempSync(join(tmpdir(), 'hub-restored-'));
      try {
        const restore = await command(['restore', bogus, ...(backend === 'postgres' ? ['--storage', hub.storage] : ['--data-dir', target])]);
        assert.equal(restore.code, 1);
        assert.match(restore.stderr, backend === 'postgres' ? /holds a hub already/ : /is not a backup of a SQLite hub/);
        const usage = await command(['backup']);
        assert.equal(usage.code, 2);
        assert.match(usage.stderr, /backup takes the backup file first/);
      } finally {
        rmSync(target, { recursive: true, force: true });
      }
    });
  });
}
