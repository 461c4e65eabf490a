// Crash durability: every write acknowledged with a 2xx survives a kill -9 of the hub right after the answer, and the engine settings that make it survive a power loss are in effect.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import pg from 'pg';
import { call, createSpace, type FeatureJson } from '../helpers/http-client.js';
import { type Backend, BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import { crashAndRestart } from '../helpers/crash.js';

function point(id: string, x: number, properties: Record<string, unknown> = {}): FeatureJson {
  return { type: 'Feature', id, geometry: { type: 'Point', coordinates: [x, 10] }, properties };
}

function collection(features: FeatureJson[]): { type: string; features: FeatureJson[] } {
  return { type: 'FeatureCollection', features };
}

/** The settings from the hub's `Durability: {…}` start-up line. */
function durabilityOf(hub: HubProcess): Record<string, string> {
  const match = /^Durability: (.*)$/m.exec(hub.stdout);
  assert.ok(match, `the hub prints its durability settings at start:\n${hub.stdout}`);
  return JSON.parse(match[1]) as Record<string, string>;
}

/**
 * A kill -9 cannot tell these apart from weaker ones (the OS keeps the written pages), a power loss can:
 * SQLite must fsync the WAL at every commit; PostgreSQL must flush the WAL before a commit returns.
 */
const DURABLE: Record<Backend, Record<string, string>> = {
  sqlite: { journal_mode: 'wal', synchronous: 'FULL' },
  postgres: { synchronous_commit: 'on', fsync: 'on' },
};

for (const backend of BACKENDS) {
  describe(`durability settings (${backend})`, () => {
    test('the hub reports the durable settings read back from its own connection', async () => {
      const hub = await startHub({ backend });
      try {
        assert.deepEqual(durabilityOf(hub), DURABLE[backend]);
      } finally {
        await hub.stop();
      }
    });

    if (backend === 'postgres') {
      test('the report is what the hub\'s sessions see: a database default of synchronous_commit=off shows', async () => {
        const database = await createTestDatabase();
        const client = new pg.Client({ connectionString: database.url });
        await client.connect();
        try {
          await client.query(`ALTER DATABASE "${new URL(database.url).pathname.slice(1)}" SET synchronous_commit = off`);
        } finally {
          await client.end();
        }
        const hub = await startHub({ backend, storage: database.url });
        try {
          assert.equal(durabilityOf(hub).synchronous_commit, 'off');
        } finally {
          await hub.stop();
          await database.remove();
        }
      });
    }
  });

  describe(`durability across kill -9 (${backend})`, () => {
    test('acknowledged PUTs, a patch and a delete are all there after a crash right after the last answer', async () => {
      let hub = await startHub({ backend });
      try {
        const space = await createSpace(hub);
        const base = `/hub/spaces/${space}/features`;
        const batches = [0, 1, 2].map((batch) =>
          Array.from({ length: 50 }, (_, i) => point(`b${batch}-${i}`, batch + i / 100, { batch, i })));
        for (const batch of batches) {
          assert.equal((await call(hub, 'PUT', base, { body: collection(batch) })).status, 200);
        }
        assert.equal((await call(hub, 'PUT', `${base}/single`, { body: point('ignored', 5, { kind: 'single' }) })).status, 200);
        const patch = await call(hub, 'POST', base, { body: collection([{ ...point('b0-7', 7.5), properties: { patched: true } }]) });
        assert.equal(patch.status, 200);
        const deleted = await call(hub, 'DELETE', `${base}/b1-3`);
        assert.equal(deleted.status, 204);

        hub = await crashAndRestart(hub);

        const count = await call(hub, 'GET', `/hub/spaces/${space}/count`);
        assert.equal(count.status, 200);
        // 150 from the batches, plus `single`, minus the deleted b1-3.
        assert.equal(count.body.count, 150);
        const all = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=1000`);
        const byId = new Map((all.body.features ?? []).map((feature) => [feature.id, feature]));
        for (const batch of batches) {
          for (const feature of batch) {
            if (feature.id === 'b1-3') continue;
            assert.ok(byId.has(feature.id), `feature ${feature.id} is missing after the crash`);
          }
        }
        assert.equal(byId.has('b1-3'), false);
        assert.equal(byId.get('single')?.properties.kind, 'single');
        const patched = byId.get('b0-7');
        assert.equal(patched?.properties.patched, true);
        assert.equal(patched?.properties.batch, 0);
        assert.deepEqual(patched?.geometry?.coordinates, [7.5, 10, 0]);
        assert.equal((await call(hub, 'GET', `${base}/b1-3`)).status, 404);
      } finally {
        await hub.stop();
      }
    });

    test('every write answered before a crash in the middle of a stream of writes is there afterwards', async () => {
      let hub = await startHub({ backend });
      try {
        const space = await createSpace(hub);
        const base = `/hub/spaces/${space}/features`;
        const acknowledged: string[] = [];
        let killed = false;
        let sent = 0;
        // Four writers keep requests in flight, so the kill lands while some are being processed.
        const writer = async (worker: number): Promise<void> => {
          for (let i = 0; !killed; i++) {
            const id = `w${worker}-${i}`;
            sent++;
            try {
              const response = await call(hub, 'PUT', `${base}/${id}`, { body: point(id, worker, { i }) });
              if (response.status === 200 && !killed) acknowledged.push(id);
            } catch {
              return;
            }
          }
        };
        const writers = [0, 1, 2, 3].map(writer);
        while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 5));
        killed = true;
        const acknowledgedBeforeKill = [...acknowledged];
        hub = await crashAndRestart(hub);
        await Promise.all(writers);
        assert.ok(sent > acknowledgedBeforeKill.length);

        const all = await call(hub, 'GET', `/hub/spaces/${space}/iterate?limit=100000`);
        assert.equal(all.status, 200);
        const stored = new Set((all.body.features ?? []).map((feature) => feature.id));
        const missing = acknowledgedBeforeKill.filter((id) => !stored.has(id));
        assert.deepEqual(missing, []);
      } finally {
        await hub.stop();
      }
    });
  });
}
