// Login sessions and failed logins in the catalog database, shared by every node.
import type { LoginFailures, SessionRecord, SessionStore } from '../storage.js';
import type { Database, Prepared } from './database.js';

interface SessionRow { id_hash: string; account_id: string; expires_at: number }
interface FailureRow { failures: number; last_at: number }

const SESSION_BY_HASH: Prepared = {
  name: 'session_by_hash',
  text: 'SELECT id_hash, account_id, expires_at FROM sessions WHERE id_hash = $1 AND expires_at > $2',
};

export class PostgresSessionStore implements SessionStore {
  constructor(private readonly db: Database) {}

  async create(session: SessionRecord, now: number): Promise<void> {
    await this.db.query('DELETE FROM sessions WHERE expires_at <= $1', [now]);
    await this.db.query('INSERT INTO sessions (id_hash, account_id, expires_at) VALUES ($1, $2, $3)',
      [session.idHash, session.accountId, session.expiresAt]);
  }

  async find(idHash: string, now: number): Promise<SessionRecord | undefined> {
    const [row] = await this.db.query<SessionRow>(SESSION_BY_HASH, [idHash, now]);
    return row && { idHash: row.id_hash, accountId: row.account_id, expiresAt: row.expires_at };
  }

  async delete(idHash: string): Promise<void> {
    await this.db.query('DELETE FROM sessions WHERE id_hash = $1', [idHash]);
  }

  async deleteForAccount(accountId: string): Promise<void> {
    await this.db.query('DELETE FROM sessions WHERE account_id = $1', [accountId]);
  }

  async recordLoginFailure(username: string, now: number, windowMs: number): Promise<LoginFailures> {
    await this.db.query('DELETE FROM login_failures WHERE last_at <= $1', [now - windowMs]);
    // One statement, so that parallel failures on several nodes all count.
    const [row] = await this.db.query<FailureRow>(
      `INSERT INTO login_failures AS f (username, failures, last_at) VALUES ($1, 1, $2)
       ON CONFLICT (username) DO UPDATE SET failures = CASE WHEN f.last_at <= $3 THEN 1 ELSE f.failures + 1 END, last_at = excluded.last_at
       RETURNING failures, last_at`, [username, now, now - windowMs]);
    return { count: row.failures, lastAt: row.last_at };
  }


  async clearLoginFailures(username: string): Promise<void> {
    await this.db.query('DELETE FROM login_failures WHERE username = $1', [username]);
  }
}
