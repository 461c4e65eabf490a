// Accounts and access tokens in the embedded SQLite database.
import type Database from 'better-sqlite3';
import type { AccessStore, AccountRecord, TokenRecord } from '../storage.js';

interface AccountRow { id: string; username: string; password_hash: string; admin: number; created_at: number }
interface TokenRow { tid: string; aid: string; secret_hash: string; claims: string; bootstrap: number }

export class SqliteAccessStore implements AccessStore {
  private readonly insertAccount;
  private readonly selectAccount;
  private readonly insertToken;
  private readonly selectToken;
  private readonly deleteBootstrapTokens;

  constructor(db: Database.Database) {
    this.insertAccount = db.prepare('INSERT INTO accounts (id, username, password_hash, admin, created_at) VALUES (?, ?, ?, ?, ?)');
    this.selectAccount = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE username = ?');
    this.insertToken = db.prepare('INSERT INTO tokens (secret_hash, tid, aid, claims, bootstrap) VALUES (?, ?, ?, ?, ?)');
    this.selectToken = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE secret_hash = ?');
    this.deleteBootstrapTokens = db.prepare('DELETE FROM tokens WHERE bootstrap = 1 AND secret_hash <> ?');
  }

  async createAccount(account: AccountRecord): Promise<void> {
    this.insertAccount.run(account.id, account.username, account.passwordHash, account.admin ? 1 : 0, account.createdAt);
  }

  async findAccountByUsername(username: string): Promise<AccountRecord | undefined> {
    const row = this.selectAccount.get(username);
    return row && {
      id: row.id, username: row.username, passwordHash: row.password_hash, admin: row.admin === 1, createdAt: row.created_at,
    };
  }

  async createToken(token: TokenRecord): Promise<void> {
    this.insertToken.run(token.secretHash, token.tid, token.aid, JSON.stringify(token.claims), token.bootstrap ? 1 : 0);
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const row = this.selectToken.get(secretHash);
    return row && {
      tid: row.tid, aid: row.aid, secretHash: row.secret_hash, claims: JSON.parse(row.claims) as Record<string, unknown>,
      bootstrap: row.bootstrap === 1,
    };
  }

  async revokeBootstrapTokens(except: string): Promise<number> {
    return this.deleteBootstrapTokens.run(except).changes;
  }
}
