// Login sessions and failed logins in the embedded SQLite database.
import type Database from 'better-sqlite3';
import type { LoginFailures, SessionRecord, SessionStore } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

interface SessionRow { id_hash: string; account_id: string; expires_at: number }
interface FailureRow { failures: number; last_at: number }

export class SqliteSessionStore implements SessionStore {
  private readonly insertSession;
  private readonly deleteExpired;
  private readonly selectSession;
  private readonly deleteSession;
  private readonly deleteAccountSessions;
  private readonly upsertFailure;
  private readonly deleteStaleFailures;
  private readonly deleteFailures;

  constructor(db: Database.Database, private readonly writes: WriteTransactions) {
    this.insertSession = db.prepare('INSERT INTO sessions (id_hash, account_id, expires_at) VALUES (?, ?, ?)');
    this.deleteExpired = db.prepare('DELETE FROM sessions WHERE expires_at <= ?');
    this.selectSession = db.prepare<[string, number], SessionRow>('SELECT * FROM sessions WHERE id_hash = ? AND expires_at > ?');
    this.deleteSession = db.prepare('DELETE FROM sessions WHERE id_hash = ?');
    this.deleteAccountSessions = db.prepare('DELETE FROM sessions WHERE account_id = ?');
    this.upsertFailure = db.prepare<[string, number, number], FailureRow>(
      `INSERT INTO login_failures (username, failures, last_at) VALUES (?, 1, ?)
       ON CONFLICT (username) DO UPDATE SET failures = CASE WHEN last_at <= ? THEN 1 ELSE failures + 1 END, last_at = excluded.last_at
       RETURNING failures, last_at`);
    this.deleteStaleFailures = db.prepare('DELETE FROM login_failures WHERE last_at <= ?');
    this.deleteFailures = db.prepare('DELETE FROM login_failures WHERE username = ?');
  }

  async create(session: SessionRecord, now: number): Promise<void> {
    await this.writes.run(() => {
      this.deleteExpired.run(now);
      this.insertSession.run(session.idHash, session.accountId, session.expiresAt);
    });
  }

  async find(idHash: string, now: number): Promise<SessionRecord | undefined> {
    const row = this.selectSession.get(idHash, now);
    return row && { idHash: row.id_hash, accountId: row.account_id, expiresAt: row.expires_at };
  }

  async delete(idHash: string): Promise<void> {
    await this.writes.run(() => this.deleteSession.run(idHash));
  }

  async deleteForAccount(accountId: string): Promise<void> {
    await this.writes.run(() => this.deleteAccountSessions.run(accountId));
  }

  async recordLoginFailure(username: string, now: number, windowMs: number): Promise<LoginFailures> {
    const row = await this.writes.run(() => {
      this.deleteStaleFailures.run(now - windowMs);
      return this.upsertFailure.get(username, now, now - windowMs) as FailureRow;
    });
    return { count: row.failures, lastAt: row.last_at };
  }


  async clearLoginFailures(username: string): Promise<void> {
    await this.writes.run(() => this.deleteFailures.run(username));
  }
}
