// A hub refuses to start on a database whose schema is newer than it knows, on both engines, and says why.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { BACKENDS, type HubProcess, startHub } from '../helpers/hub-process.js';

/** Moves the stored schema version past what the hub knows, as a newer hub would have left it. */
async function bumpSchema(hub: HubProcess): Promise<void> {
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'));
    db.pragma('user_version = 999');
    db.close();
    return;
  }
  const client = new pg.Client({ connectionString: hub.storage });
  await client.connect();
  await client.query(`UPDATE hub_schema SET version = 999 WHERE component = 'content'`);
  await client.end();
}

for (const backend of BACKENDS) {
  describe(`schema versions (${backend})`, () => {
    test('a schema newer than the hub knows is refused at start-up', async () => {
      const hub = await startHub({ backend });
      await hub.stop({ keepData: true });
      await bumpSchema(hub);
      // The same data directory finds the same database again.
      await assert.rejects(startHub({ backend, dataDir: hub.dataDir }), /newer than this hub knows.*upgrade the hub/s);
      await hub.stop();
    });
  });
}
