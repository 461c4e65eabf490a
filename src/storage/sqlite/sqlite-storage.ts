// The embedded storage engine: one SQLite file in WAL mode holding spaces, features, access records and projects.
import Database from 'better-sqlite3';
import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { ChangeListener, ChangeWatch, PoolFigures, Storage } from '../storage.js';
import { StorageError } from '../storage-error.js';
import { SqliteAccessStore } from './access-store.js';
import { SqliteSessionStore } from './session-store.js';
import { SqliteFeatureStore } from './feature-store.js';
import { SqliteHistoryStore } from './history-store.js';
import { cql2Arithmetic, cql2Finite, cql2Fold } from './cql2-functions.js';
import { jsonContains } from './json-contains.js';
import { migrate } from './migrations.js';
import { makeOwnerOnly } from './owner-only-files.js';
import { SqliteProjectStore } from './project-store.js';
import { SqliteSpaceStore } from './space-store.js';
import { SqliteSubscriptionStore } from './subscription-store.js';
import { SqliteJobStore } from './job-store.js';
import { CommitStamp } from './commit-stamp.js';
import { BUSY_TIMEOUT_MS, WriteTransactions } from './write-transactions.js';

/** PRAGMA synchronous answers a number; these are its documented names. */
const SYNCHRONOUS_LEVELS = ['OFF', 'NORMAL', 'FULL', 'EXTRA'];

export interface SqliteOptions {
  /** The database time a read may take in ms; 0 for no deadline. */
  queryTimeout: number;
  /**
   * False for a bulk filler that may lose its last commits on a crash (the benchmark's history): commits are not
   * fsynced (synchronous = OFF). The hub itself always opens durable.
   */
  durable?: boolean;
}

export class SqliteStorage implements Storage {
  readonly engine = 'sqlite';
  readonly changesStayInProcess = true;
  readonly spaces: SqliteSpaceStore;
  readonly features: SqliteFeatureStore;
  readonly history: SqliteHistoryStore;
  readonly access: SqliteAccessStore;
  readonly projects: SqliteProjectStore;
  readonly sessions: SqliteSessionStore;
  readonly subscriptions: SqliteSubscriptionStore;
  readonly jobs: SqliteJobStore;

  private readonly writes: WriteTransactions;
  private readonly commits: CommitStamp;
  /** The file's inode when opened: a file moved or deleted under the hub leaves it writing to one nobody will open again. */
  private readonly inode: number;

  private constructor(private readonly db: Database.Database, private readonly file: string, options: SqliteOptions) {
    const writes = new WriteTransactions(db, options.queryTimeout);
    this.writes = writes;
    this.commits = new CommitStamp(db);
    this.inode = statSync(file).ino;
    this.spaces = new SqliteSpaceStore(db, writes);
    this.jobs = new SqliteJobStore(db, writes);
    this.features = new SqliteFeatureStore(db, writes, options.queryTimeout, this.jobs);
    this.history = new SqliteHistoryStore(db, writes);
    this.access = new SqliteAccessStore(db, writes);
    this.projects = new SqliteProjectStore(db, writes);
    this.sessions = new SqliteSessionStore(db, writes);
    this.subscriptions = new SqliteSubscriptionStore(db, writes);
  }

  /** Opens (or creates) the file and brings its schema up to date. */
  static async open(file: string, options: SqliteOptions): Promise<SqliteStorage> {
    mkdirSync(dirname(file), { recursive: true });
    makeOwnerOnly(file);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    // FULL makes every commit durable (fsync of the WAL) before a write is acknowledged:
    // NORMAL would survive kill -9 but could lose the last commits on power loss.
    db.pragma(options.durable === false ? 'synchronous = OFF' : 'synchronous = FULL');
    db.pragma('foreign_keys = OFF');
    db.pragma('cache_size = -65536');
    // A checkpoint after 16,384 WAL pages (64 MiB) instead of SQLite's 1,000: a write of 1,000 scattered features
    // dirties 1,500 to 2,800 pages, so at 1,000 every commit was followed by a checkpoint with its own fsync, copying
    // pages the next commits dirty again. Pages written per feature fell by 38% at 250,000 features in a space and 9%
    // at 2,000,000 (docs/decisions.md, "SQLite ingest"); the cost is a WAL file of up to 64 MiB and a longer
    // checkpoint in the commit that crosses it.
    db.pragma('wal_autocheckpoint = 16384');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.function('hub_json_contains', { deterministic: true }, jsonContains);
    db.function('hub_cql2_arithmetic', { deterministic: true }, cql2Arithmetic);
    db.function('hub_cql2_finite', { deterministic: true }, cql2Finite);
    db.function('hub_cql2_fold', { deterministic: true }, cql2Fold);
    try {
      await migrate(db);
    } catch (error) {
      db.close();
      throw error;
    }
    return new SqliteStorage(db, file, options);
  }

  /**
   * The versions this process commits, as they commit. Other processes on the same file are not heard: a node's
   * workers relay theirs over IPC, and listeners look at the versions themselves too (hub/changes/space-changes.ts).
   */
  watchChanges(listener: ChangeListener): ChangeWatch {
    const stop = this.features.onChange(listener);
    return { close: async () => stop() };
  }

  /** Every commit to the file is seen by the next look (commit-stamp.ts). */
  spacesStamp(): string {
    return this.commits.current();
  }

  async durability(): Promise<Record<string, string>> {
    const synchronous = this.db.pragma('synchronous', { simple: true }) as number;
    return {
      journal_mode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: SYNCHRONOUS_LEVELS[synchronous] ?? String(synchronous),
    };
  }

  /**
   * The open connection keeps answering after its file was moved or deleted, so the file is looked up by its path too:
   * a hub whose writes would be gone at its next start is not ready.
   */
  async ping(): Promise<void> {
    let inode: number | undefined;
    try {
      inode = statSync(this.file).ino;
    } catch {
      inode = undefined;
    }
    if (inode !== this.inode) throw new StorageError('unavailable', 'the database file is no longer at its path');
    try {
      this.db.prepare('SELECT count(*) FROM sqlite_schema').get();
    } catch (error) {
      throw new StorageError('unavailable', error instanceof Error ? error.message : String(error));
    }
  }

  poolFigures(): PoolFigures {
    return { connections: 1, busy: this.db.inTransaction ? 1 : 0, waiting: this.writes.waiting };
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
