// Accounts and access tokens in the catalog database.
import type { AccessStore, AccountRecord, TokenRecord } from '../storage.js';
import type { Database, Prepared } from './database.js';

interface AccountRow { id: string; username: string; password_hash: string; admin: boolean; created_at: number }
interface TokenRow { tid: string; aid: string; secret_hash: string; claims: string; bootstrap: boolean }

const ACCOUNT_BY_USERNAME: Prepared = {
  name: 'account_by_username',
  text: 'SELECT id, username, password_hash, admin, created_at FROM accounts WHERE username = $1',
};
const TOKEN_BY_SECRET: Prepared = { name: 'token_by_secret', text: 'SELECT tid, aid, secret_hash, claims, bootstrap FROM tokens WHERE secret_hash = $1' };

export class PostgresAccessStore implements AccessStore {
  constructor(private readonly db: Database) {}

  async createAccount(account: AccountRecord): Promise<void> {
    await this.db.query('INSERT INTO accounts (id, username, password_hash, admin, created_at) VALUES ($1, $2, $3, $4, $5)',
      [account.id, account.username, account.passwordHash, account.admin, account.createdAt]);
  }

  async findAccountByUsername(username: string): Promise<AccountRecord | undefined> {
    const [row] = await this.db.query<AccountRow>(ACCOUNT_BY_USERNAME, [username]);
    return row && { id: row.id, username: row.username, passwordHash: row.password_hash, admin: row.admin, createdAt: row.created_at };
  }

  async createToken(token: TokenRecord): Promise<void> {
    await this.db.query('INSERT INTO tokens (secret_hash, tid, aid, claims, bootstrap) VALUES ($1, $2, $3, $4, $5)',
      [token.secretHash, token.tid, token.aid, JSON.stringify(token.claims), token.bootstrap === true]);
  }

  async findTokenBySecretHash(secretHash: string): Promise<TokenRecord | undefined> {
    const [row] = await this.db.query<TokenRow>(TOKEN_BY_SECRET, [secretHash]);
    return row && {
      tid: row.tid, aid: row.aid, secretHash: row.secret_hash, claims: JSON.parse(row.claims) as Record<string, unknown>, bootstrap: row.bootstrap,
    };
  }

  async revokeBootstrapTokens(except: string): Promise<number> {
    return (await this.db.query('DELETE FROM tokens WHERE bootstrap AND secret_hash <> $1 RETURNING tid', [except])).length;
  }
}
