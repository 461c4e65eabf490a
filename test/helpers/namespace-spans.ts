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

const ROWS = 'SELECT f.id, f.json AS text, f.ns_cut AS cut FROM features f JOIN spaces s ON s.sid = f.sid WHERE s.id = ? ORDER BY f.seq';
const SET = 'UPDATE features SET ns_cut = ? WHERE id = ? AND sid = (SELECT sid FROM spaces WHERE id = ?)';

/** Runs one statement (written with `?` and `json` for the text) in the hub's database, SQLite's or PostgreSQL's (one database in the tests: catalog and features together). */
async function run(hub: HubProcess, sql: string, values: unknown[]): Promise<unknown[]> {
  if (hub.backend === 'sqlite') {
    const db = new Database(join(hub.dataDir, 'hub.db'));
    try {
      const statement = db.prepare(sql);
      return statement.reader ? statement.all(...values) : (statement.run(...values), []);
    } finally {
      db.close();
    }
  }
  let n = 0;
  const client = new pg.Client({ connectionString: hub.storage });
  await client.connect();
  try {
    return (await client.query(sql.replaceAll('?', () => `$${++n}`).replace('f.json', 'f.feature'), values)).rows;
  } finally {
    await client.end();
  }
}

/** Every row of the space in insertion order: its id, stored text and span. */
export async function spanRows(hub: HubProcess, spaceId: string): Promise<SpanRow[]> {
  return await run(hub, ROWS, [spaceId]) as SpanRow[];
}

/** Sets a row's span (null: as a row written before the migration has it). */
export async function setSpan(hub: HubProcess, spaceId: string, featureId: string, cut: number | null): Promise<void> {
  await run(hub, SET, [cut, featureId, spaceId]);
}
