// Backup and restore of a SQLite hub: SQLite's online backup API, a consistent copy taken while the hub serves and writes.
import Database from 'better-sqlite3';
import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { makeOwnerOnly } from './owner-only-files.js';

/**
 * The copy's pages per step after the first: all of them. A write by another connection between two steps makes
 * SQLite start the copy over, so under steady writes a copy in small steps might never end; one step holding its
 * read transaction copies one state of the database (WAL mode lets the hub's writes go on meanwhile).
 */
const ALL_PAGES = 2 ** 31 - 1;

/** Copies `from` (a database file) to `to` through a temporary file next to it, so that `to` never holds half a copy. */
async function copyDatabase(from: string, to: string): Promise<number> {
  const source = new Database(from, { readonly: true, fileMustExist: true });
  const partial = `${to}.partial`;
  try {
    rmSync(partial, { force: true });
    makeOwnerOnly(partial);
    await source.backup(partial, { progress: () => ALL_PAGES });
    renameSync(partial, to);
    makeOwnerOnly(to);
    return statSync(to).size;
  } finally {
    source.close();
    rmSync(partial, { force: true });
  }
}

/** A file this hub wrote: SQLite, with the hub's schema (its user_version counts the migrations applied). */
function checkHubDatabase(file: string): void {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const version = db.pragma('user_version', { simple: true }) as number;
    const spaces = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'spaces'").get();
    if (version < 1 || spaces === undefined) throw new Error('it holds no hub schema');
  } catch (error) {
    throw new Error(`${file} is not a backup of a SQLite hub: ${error instanceof Error ? error.message : String(error)}`);
  } finally {
    db?.close();
  }
}

export async function backupSqlite(databaseFile: string, backupFile: string): Promise<string> {
  if (!existsSync(databaseFile)) throw new Error(`There is no database at ${databaseFile} (HUB_STORAGE or --data-dir)`);
  const bytes = await copyDatabase(databaseFile, backupFile);
  return `Backed up ${databaseFile} to ${backupFile} (${bytes} bytes, one consistent state).`;
}

/** Into a database file that does not exist yet: restoring over a hub's data is refused rather than guessed at. */
export async function restoreSqlite(backupFile: string, databaseFile: string): Promise<string> {
  if (!existsSync(backupFile)) throw new Error(`There is no backup at ${backupFile}`);
  checkHubDatabase(backupFile);
  if (existsSync(databaseFile) && statSync(databaseFile).size > 0) {
    throw new Error(`${databaseFile} exists: restore into a new data directory or storage location (stop the hub and move the old file away first)`);
  }
  const bytes = await copyDatabase(backupFile, databaseFile);
  return `Restored ${backupFile} to ${databaseFile} (${bytes} bytes).`;
}
