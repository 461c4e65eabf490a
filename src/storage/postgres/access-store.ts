// Accounts and access tokens in the catalog database.
import { StorageError } from '../storage-error.js';
import type { AccessStore, AccountRecord, RevocationWatch, TokenRecord } from '../storage.js';
import { type Database, type Prepared, sqlState } from './database.js';
import { listenForRevocations, REVOCATION_CHANNEL } from './revocation-listener.js';

interface AccountRow { id: string; username: string; password_hash: string; admin: boolean; created_at: number; rights: string | null }
interface TokenRow { tid: string; aid: string; secret_hash: string; claims: string; bootstrap: boolean }

const ACCOUNT_COLUMNS = 'id, username, password_hash, admin, created_at, rights';
const TOKEN_COLUMNS = 'tid, aid, secret_hash, claims, bootstrap';
const ACCOUNT_BY_USERNAME: Prepared = { name: 'account_by_username', text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE username = $1` };
const ACCOUNT_BY_ID: Prepared = { name: 'account_by_id', text: `SELECT ${ACCOUNT_COLUMNS} FROM accounts WHERE id = $1` };
const TOKEN_BY_SECRET: Prepared = { name: 'token_by_secret', text: `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE secret_hash = $1` };

function account(row: AccountRow): AccountRecord {
  const record: AccountRecord = { id: row.id, username: row.username, passwordHash: row.password_hash, admin: row.admin, createdAt: row.created_at };
  if (row.rights !== null) record.rights = JSON.parse(row.rights) as Record<string, unknown>;
  return record;
}

function token(row: TokenRow): TokenRecord {
  return { tid: row.tid, aid: row.aid, secretHash: row.secret_hash, claims: JSON.parse(row.claims) as Record<string, unknown>, bootstrap: row.bootstrap };
}

export class PostgresAccessStore implements AccessStore {
  private readonly watches = new Set<RevocationWatch>();

  constructor(private readonly db: Database) {}

  watchRevocations(onRevoked: (secretHash?: string) => void): RevocationWatch {
    const watch = listenForRevocations(this.db.url, onRevoked);
    this.watches.add(watch);
    return watch;
  }

  async close(): Promise<void> {
    await Promise.all([...this.watches].map((watch) => watch.close()));
    this.watches.clear();
  }

  async createAccount(record: AccountRecord): Promise<void> {
    try {
      await this.db.query('INSERT INTO accounts (id, username, password_hash, admin, created_at, rights) VALUES ($1, $2, $3, $4, $5, $6)',
        [record.id, record.username, record.passwordHash, record.admin, record.createdAt, record.rights === undefined ? null : JSON.stringify(record.rights)]);
    } catch (error) {
      if (sqlState(error) === '23505') throw new StorageError('accountExists', record.username);
      throw error;
    }
  }

  async findAccountByUsername(username: string): Promise<AccountRecord | undefined> {
    const [row] = await this.db.query<AccountRow>(ACCOUNT_BY_USERNAME, [username]);
    return row && account(row);
  }

  async findAccountById(id: string): Promise<AccountRecord | undefined> {
    const [row] = await this.db.query<AccountRow>(ACCOUNT_BY_ID, [id]);
    return row && account(row);
  }

  async listAccounts(): Promise<AccountRecord[]> {
    return (await this.db.query<AccountRow>(`SELECT ${ACCOUNT_COLUMNS} FROM accounts ORDER BY username`)).map(account);
  }

  async updatePassword(id: string, passwordHash: string): Promise<boolean> {
    return (await this.db.query('UPDATE accounts SET password_hash = $1 WHERE id = $2 RETURNING id', [passwordHash, id])).length === 1;
  }

  async createToken(record: TokenRecord): Promise<void> {
    await this.db.query('INSERT INTO tokens (secret_hash, tid, aid, claims, bootstrap) VALUES ($1, $2, $3, $4, $5)',
      [record.secretHash, record.tid, record.aid, JSON.stringify(record.claims), record.bootstrap === true]);
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.query<TokenRow>(TOKEN_BY_SECRET, [secretHash]);
    return row && token(row);
  }

  async findTokenByTid(tid: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.query<TokenRow>(`SELECT ${TOKEN_COLUMNS} FROM tokens WHERE tid = $1`, [tid]);
    return row && token(row);
  }

  async listTokens(aid: string): Promise<TokenRecord[]> {
    // The tokens table has no insertion counter; iat (seconds) then tid gives a stable oldest-first order.
    const rows = await this.db.query<TokenRow>(
      `SELECT ${TOKEN_COLUMNS} FROM tokens WHERE aid = $1 ORDER BY (claims::jsonb ->> 'iat')::bigint NULLS FIRST, tid`, [aid]);
    return rows.map(token);
  }

  async deleteToken(tid: string): Promise<TokenRecord | undefined> {
    // The notification goes out when the deletion commits: every node listening forgets the token then.
    const [row] = await this.db.query<TokenRow>(
      `WITH gone AS (DELETE FROM tokens WHERE tid = $1 RETURNING ${TOKEN_COLUMNS})
       SELECT ${TOKEN_COLUMNS}, pg_notify('${REVOCATION_CHANNEL}', secret_hash) FROM gone`, [tid]);
    return row && token(row);
  }

  async revokeBootstrapTokens(except: string): Promise<number> {
    return (await this.db.query(`WITH gone AS (DELETE FROM tokens WHERE bootstrap AND secret_hash <> $1 RETURNING secret_hash)
      SELECT pg_notify('${REVOCATION_CHANNEL}', secret_hash) FROM gone`, [except])).length;
  }
}
