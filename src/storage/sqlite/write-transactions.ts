// Write transactions on the SQLite file that several hub processes share: the write lock is waited for without blocking the event loop.
import type Database from 'better-sqlite3';
import { setTimeout as sleep } from 'node:timers/promises';
import { StorageError } from '../storage-error.js';

/** Reads may wait this long for a lock (the rare cases where WAL readers must: another connection recovering the file). */
export const BUSY_TIMEOUT_MS = 5000;
/** The first retry of a busy write lock comes after about this long; each one waits twice as long, up to MAX_RETRY_MS. */
const FIRST_RETRY_MS = 1;
/**
 * Short enough that a waiting writer catches the lock soon after a long write ends, which it cannot be told of; each
 * try costs a failed BEGIN of some microseconds.
 */
const MAX_RETRY_MS = 4;

const isBusy = (error: unknown) => String((error as { code?: unknown }).code).startsWith('SQLITE_BUSY');

/**
 * WAL lets one connection write at a time. better-sqlite3 is synchronous, so a statement waiting in SQLite's busy
 * handler for another process's write would hold this process's event loop, and every request on it, for as long
 * as that write takes. Instead `BEGIN IMMEDIATE` is tried without waiting; when another connection holds the lock
 * the attempt is repeated after a growing pause on a timer, while this process serves other requests. Once the
 * lock is taken the work runs and commits synchronously, so nothing else on this connection runs inside the
 * transaction. The wait counts against the query deadline (HUB_QUERY_TIMEOUT): past it the write fails with
 * `timeout` and changes nothing.
 */
export class WriteTransactions {
  private readonly begin;
  private readonly commit;
  private readonly rollback;
  private readonly noWait;
  private readonly wait;

  /** Writes of this process waiting for the write lock now (GET /metrics). */
  waiting = 0;

  constructor(private readonly db: Database.Database, private readonly deadlineMs: number) {
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
    this.noWait = db.prepare('PRAGMA busy_timeout = 0');
    this.wait = db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }

  /** Runs `work` (synchronous; it may throw to roll back) in one write transaction and returns its result once committed. */
  async run<T>(work: () => T): Promise<T> {
    const start = performance.now();
    if (!this.tryBegin()) {
      this.waiting++;
      try {
        for (let retry = FIRST_RETRY_MS; ; retry = Math.min(2 * retry, MAX_RETRY_MS)) {
          if (this.deadlineMs > 0 && performance.now() - start > this.deadlineMs) {
            throw new StorageError('timeout', `the write waited more than ${this.deadlineMs} ms for another write to end`);
          }
          // Jittered, so that processes waiting together do not try again in step.
          await sleep(retry * (0.5 + Math.random() / 2));
          if (this.tryBegin()) break;
        }
      } finally {
        this.waiting--;
      }
    }
    try {
      const result = work();
      this.commit.run();
      return result;
    } catch (error) {
      if (this.db.inTransaction) this.rollback.run();
      throw error;
    }
  }

  /** Takes the write lock if no other connection holds it; false when one does. */
  private tryBegin(): boolean {
    this.noWait.get();
    try {
      this.begin.run();
      return true;
    } catch (error) {
      if (isBusy(error)) return false;
      throw error;
    } finally {
      this.wait.get();
    }
  }
}

/**
 * Between the transactions of a long series (a delete in chunks): long enough that a writer of another process waiting
 * on its timer tries in between and gets its turn, where an immediate next chunk would keep the lock from it until the
 * series ends. Other requests of this process are served meanwhile too.
 */
export function pauseForOtherWriters(): Promise<void> {
  return sleep(MAX_RETRY_MS);
}
