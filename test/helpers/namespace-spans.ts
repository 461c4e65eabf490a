// The namespace span each feature row of a space holds (core/namespace-cut.ts), read and set in the hub's database itself: what a row from before the span's migration, or a wrong span, looks like.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { HubProcess } from './hub-process.js';

export interface SpanRow {
  id: string;
  /** The stored text. */
  text: string;
  /** The span, null where the row has none. */
  cut: number | null;
}

async function withDatabase<T>(hub: HubProcess, sqlite: (db: Database.Database) => T, postgres: (client: pg.Client) => Promise<T>): Promise<T> {
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'));
    try {
      return sqlite(db);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: hub.storage });
  await client.connect();
  try {
    return await postgres(client);
  } finally {
    await client.end();
  }
}

/** Every row of the space in insertion order: its id, stored text and span. */
export function spanRows(hub: HubProcess, spaceId: string): Promise<SpanRow[]> {
  return withDatabase(hub,
    (db) => db.prepare('SELECT f.id, f.json AS text, f.ns_cut AS cut FROM features f JOIN spaces s ON s.sid = f.sid WHERE s.id = ? ORDER BY f.seq').all(spaceId) as SpanRow[],
    async (client) => (await client.query<SpanRow>('SELECT f.id, f.feature AS text, f.ns_cut AS cut FROM features f JOIN spaces s ON s.sid = f.sid WHERE s.id = $1 ORDER BY f.seq', [spaceId])).rows);
}

/** Sets a row's span (null: as a row written before the migration has it). */
export function setSpan(hub: HubProcess, spaceId: string, featureId: string, cut: number | null): Promise<void> {
  return withDatabase(hub,
    (db) => { db.prepare('UPDATE features SET ns_cut = ? WHERE id = ? AND sid = (SELECT sid FROM spaces WHERE id = ?)').run(cut, featureId, spaceId); },
    async (client) => { await client.query('UPDATE features SET ns_cut = $1 WHERE id = $2 AND sid = (SELECT sid FROM spaces WHERE id = $3)', [cut, featureId, spaceId]); });
}
