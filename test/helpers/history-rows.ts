// The history rows a hub keeps for a space, read from its database itself: what pruning removed (ADR 002) is gone from there.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { HubProcess } from './hub-process.js';

/** The history rows kept for a space, read from the database itself: what pruning removed is gone from there. */
export async function historyRows(hub: HubProcess, spaceId: string): Promise<{ states: number; versions: number }> {
  const counts = 'SELECT (SELECT count(*) FROM feature_history WHERE sid = s.sid) AS states, (SELECT count(*) FROM space_versions WHERE sid = s.sid) AS versions FROM spaces s WHERE s.id = ';
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'), { readonly: true });
    try {
      return db.prepare(`${counts}?`).get(spaceId) as { states: number; versions: number };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: hub.storage });
  await client.connect();
  try {
    const { rows: [row] } = await client.query<{ states: string; versions: string }>(`${counts}$1`, [spaceId]);
    return { states: Number(row.states), versions: Number(row.versions) };
  } finally {
    await client.end();
  }
}

/** Waits for the background pruning to bring the rows down to `expected` (it runs shortly after the write that asks for it). */
export async function prunedTo(hub: HubProcess, spaceId: string, expected: { states: number; versions: number }): Promise<void> {
  let rows = await historyRows(hub, spaceId);
  for (let attempt = 0; attempt < 50 && (rows.states !== expected.states || rows.versions !== expected.versions); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    rows = await historyRows(hub, spaceId);
  }
  assert.deepEqual(rows, expected);
}
