// The namespace span each feature row of a SQLite space holds (core/namespace-cut.ts), read and set in the hub's database itself: what a row from before the span's migration, or a wrong span, looks like.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { HubProcess } from './hub-process.js';

export interface SpanRow {
  id: string;
  /** The stored text. */
  text: string;
  /** The span, null where the row has none. */
  cut: number | null;
}

function withDatabase<T>(hub: HubProcess, work: (db: Database.Database) => T): T {
  const db = new Database(join(hub.dataDir, 'hub.db'));
  try {
    return work(db);
  } finally {
    db.close();
  }
}

/** Every row of the space in insertion order: its id, stored text and span. */
export function spanRows(hub: HubProcess, spaceId: string): SpanRow[] {
  return withDatabase(hub, (db) => db.prepare('SELECT f.id, f.json AS text, f.ns_cut AS cut FROM features f JOIN spaces s ON s.sid = f.sid WHERE s.id = ? ORDER BY f.seq').all(spaceId) as SpanRow[]);
}

/** Sets a row's span (null: as a row written before the migration has it). */
export function setSpan(hub: HubProcess, spaceId: string, featureId: string, cut: number | null): void {
  withDatabase(hub, (db) => { db.prepare('UPDATE features SET ns_cut = ? WHERE id = ? AND sid = (SELECT sid FROM spaces WHERE id = ?)').run(cut, featureId, spaceId); });
}
