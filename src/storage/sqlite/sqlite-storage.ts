// The embedded storage engine: one SQLite file in WAL mode holding spaces, features, access records and projects.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Storage } from '../storage.js';
import { SqliteAccessStore } from './access-store.js';
import { SqliteSessionStore } from './session-store.js';
import { SqliteFeatureStore } from './feature-store.js';
import { jsonContains } from './json-contains.js';
import { migrate } from './migrations.js';
import { makeOwnerOnly } from './owner-only-files.js';
import { SqliteProjectStore } from './project-store.js';
import { SqliteSpaceStore } from './space-store.js';
import { BUSY_TIMEOUT_MS, WriteTransactions } from './write-transactions.js';

/** PRAGMA synchronous answers a number; these are its documented names. */
const SYNCHRONOUS_LEVELS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

export interface SqliteOptions {
  /** The database time a read may take in ms; 0 for no deadline. */
  queryTimeout: number;
}

export class SqliteStorage implements Storage {
  readonly engine = 'sqlite';
  readonly spaces: SqliteSpaceStore;
  readonly features: SqliteFeatureStore;
  readonly access: SqliteAccessStore;
  readonly projects: SqliteProjectStore;
  readonly sessions: SqliteSessionStore;

  private constructor(private readonly db: Database.Database, options: SqliteOptions) {
    const writes = new WriteTransactions(db, options.queryTimeout);
    this.spaces = new SqliteSpaceStore(db, writes);
    this.features = new SqliteFeatureStore(db, writes, options.queryTimeout);
    this.access = new SqliteAccessStore(db, writes);
    this.projects = new SqliteProjectStore(db, writes);
    this.sessions = new SqliteSessionStore(db, writes);
  }

  /** Opens (or creates) the file and brings its schema up to date. */
  static async open(file: string, options: SqliteOptions): Promise<SqliteStorage> {
    mkdirSync(dirname(file), { recursive: true });
    makeOwnerOnly(file);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    // FULL makes every commit durable (fsync of the WAL) before a write is acknowledged:
    // NORMAL would survive kill -9 but could lose the last commits on power loss.
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -65536');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.function('hub_json_contains', { deterministic: true }, jsonContains);
    try {
      await migrate(db);
    } catch (error) {
      db.close();
      throw error;
    }
    return new SqliteStorage(db, options);
  }

  async durability(): Promise<Record<string, string>> {
    const synchronous = this.db.pragma('synchronous', { simple: true }) as number;
    return {
      journal_mode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: SYNCHRONOUS_LEVELS[synchronous] ?? String(synchronous),
    };
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
