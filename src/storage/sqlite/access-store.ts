// Accounts and access tokens in the embedded SQLite database.
import type Database from 'better-sqlite3';
import { StorageError } from '../storage-error.js';
import type { AccessStore, AccountRecord, RevocationWatch, TokenRecord } from '../storage.js';
import type { WriteTransactions } from './write-transactions.js';

interface AccountRow { id: string; username: string; password_hash: string; admin: number; created_at: number; rights: string | null }
interface TokenRow { tid: string; aid: string; secret_hash: string; claims: string; bootstrap: number }

function account(row: AccountRow): AccountRecord {
  const record: AccountRecord = { id: row.id, username: row.username, passwordHash: row.password_hash, admin: row.admin === 1, createdAt: row.created_at };
  if (row.rights !== null) record.rights = JSON.parse(row.rights) as Record<string, unknown>;
  return record;
}

function token(row: TokenRow): TokenRecord {
  return {
    tid: row.tid, aid: row.aid, secretHash: row.secret_hash, claims: JSON.parse(row.claims) as Record<string, unknown>,
    bootstrap: row.bootstrap === 1,
  };
}

export class SqliteAccessStore implements AccessStore {
  private readonly insertAccount;
  private readonly selectAccount;
  private readonly selectAccountById;
  private readonly selectAccounts;
  private readonly updateAccountPassword;
  private readonly insertToken;
  private readonly selectToken;
  private readonly selectTokenByTid;
  private readonly selectTokensByAid;
  private readonly deleteTokenByTid;
  private readonly deleteBootstrapTokens;
  private readonly watchers = new Set<(secretHash?: string) => void>();

  constructor(db: Database.Database, private readonly writes: WriteTransactions) {
    this.insertAccount = db.prepare('INSERT INTO accounts (id, username, password_hash, admin, created_at, rights) VALUES (?, ?, ?, ?, ?, ?)');
    this.selectAccount = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE username = ?');
    this.selectAccountById = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?');
    this.selectAccounts = db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY username');
    this.updateAccountPassword = db.prepare('UPDATE accounts SET password_hash = ? WHERE id = ?');
    this.insertToken = db.prepare('INSERT INTO tokens (secret_hash, tid, aid, claims, bootstrap) VALUES (?, ?, ?, ?, ?)');
    this.selectToken = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE secret_hash = ?');
    this.selectTokenByTid = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE tid = ?');
    this.selectTokensByAid = db.prepare<[string], TokenRow>('SELECT * FROM tokens WHERE aid = ? ORDER BY rowid');
    this.deleteTokenByTid = db.prepare<[string], TokenRow>('DELETE FROM tokens WHERE tid = ? RETURNING *');
    this.deleteBootstrapTokens = db.prepare<[string], string>('DELETE FROM tokens WHERE bootstrap = 1 AND secret_hash <> ? RETURNING secret_hash').pluck();
  }

  async createAccount(record: AccountRecord): Promise<void> {
    try {
      await this.writes.run(() => this.insertAccount.run(record.id, record.username, record.passwordHash, record.admin ? 1 : 0, record.createdAt,
        record.rights === undefined ? null : JSON.stringify(record.rights)));
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') throw new StorageError('accountExists', record.username);
      throw error;
    }
  }

  async findAccountByUsername(username: string): Promise<AccountRecord | undefined> {
    const row = this.selectAccount.get(username);
    return row && account(row);
  }

  async findAccountById(id: string): Promise<AccountRecord | undefined> {
    const row = this.selectAccountById.get(id);
    return row && account(row);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return this.selectAccounts.all().map(account);
  }

  async updatePassword(id: string, passwordHash: string): Promise<boolean> {
    return (await this.writes.run(() => this.updateAccountPassword.run(passwordHash, id))).changes === 1;
  }

  async createToken(record: TokenRecord): Promise<void> {
    await this.writes.run(() => this.insertToken.run(record.secretHash, record.tid, record.aid, JSON.stringify(record.claims), record.bootstrap ? 1 : 0));
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const row = this.selectToken.get(secretHash);
    return row && token(row);
  }

  async findTokenByTid(tid: string): Promise<TokenRecord | undefined> {
    const row = this.selectTokenByTid.get(tid);
    return row && token(row);
  }

  async listTokens(aid: string): Promise<TokenRecord[]> {
    return this.selectTokensByAid.all(aid).map(token);
  }

  async deleteToken(tid: string): Promise<TokenRecord | undefined> {
    const row = await this.writes.run(() => this.deleteTokenByTid.get(tid));
    if (row) this.revoked(row.secret_hash);
    return row && token(row);
  }

  async revokeBootstrapTokens(except: string): Promise<number> {
    const gone = await this.writes.run(() => this.deleteBootstrapTokens.all(except));
    for (const secretHash of gone) this.revoked(secretHash);
    return gone.length;
  }

  /**
   * The embedded database serves one node, and tokens are deleted only through it: the watchers hear every deletion
   * made through this connection as it happens and are always live. Deletions through the node's other worker
   * processes reach them through the primary (hub/access/node-peers.ts; docs/decisions.md, "Every core").
   */
  watchRevocations(onRevoked: (secretHash?: string) => void): RevocationWatch {
    this.watchers.add(onRevoked);
    return { live: () => true, close: async () => { this.watchers.delete(onRevoked); } };
  }

  private revoked(secretHash: string): void {
    for (const watcher of this.watchers) watcher(secretHash);
  }
}
