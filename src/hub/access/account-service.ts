// Accounts, login and logout, and the sessions that the session cookie names (API.md 9.1).
import { hubError } from '../../core/errors.js';
import type { AccountRecord, Storage } from '../../storage/storage.js';
import { randomId } from '../ids.js';
import { LoginThrottle } from './login-throttle.js';
import { parseRightsMatrix } from './rights-input.js';
import { hashPassword, hashToken, newSessionId, verifyPassword } from './secrets.js';

/** An account as answers show it: never its password hash. */
export interface AccountView {
  id: string;
  username: string;
  admin: boolean;
  createdAt: number;
  rights?: Record<string, unknown>;
}

export interface NewAccount {
  username?: unknown;
  password?: unknown;
  admin?: unknown;
  rights?: unknown;
}

export interface LoggedIn {
  account: AccountView;
  /** The cookie value; only its hash is stored. */
  sessionId: string;
}

/** Session lifetime when none is configured (HUB_SESSION_TTL). */
export const DEFAULT_SESSION_TTL_MS = 12 * 3_600_000;

const USERNAME = /^[A-Za-z0-9._@-]{1,64}$/;
const MIN_PASSWORD_LENGTH = 8;
/** scrypt reads the whole password: a bound keeps one login cheap. */
const MAX_PASSWORD_LENGTH = 1024;

export function accountView(account: AccountRecord): AccountView {
  const view: AccountView = { id: account.id, username: account.username, admin: account.admin, createdAt: account.createdAt };
  if (account.rights !== undefined) view.rights = account.rights;
  return view;
}

function checkUsername(value: unknown): string {
  if (typeof value !== 'string') throw hubError('invalidAccountInput', { field: 'username', problem: 'a string is required' });
  if (!USERNAME.test(value)) {
    throw hubError('invalidAccountInput', { field: 'username', problem: '1 to 64 characters of A-Z a-z 0-9 . _ @ - are allowed' });
  }
  return value;
}

function checkNewPassword(value: unknown): string {
  if (typeof value !== 'string') throw hubError('invalidAccountInput', { field: 'password', problem: 'a string is required' });
  if (value.length < MIN_PASSWORD_LENGTH || value.length > MAX_PASSWORD_LENGTH) {
    throw hubError('invalidAccountInput', { field: 'password', problem: `${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters are required` });
  }
  return value;
}

export class AccountService {
  private readonly throttle: LoginThrottle;

  constructor(private readonly storage: Storage, private readonly sessionTtlMs = DEFAULT_SESSION_TTL_MS) {
    this.throttle = new LoginThrottle(storage.sessions);
  }

  async create(input: NewAccount): Promise<AccountView> {
    const username = checkUsername(input.username);
    const password = checkNewPassword(input.password);
    if (input.admin !== undefined && typeof input.admin !== 'boolean') {
      throw hubError('invalidAccountInput', { field: 'admin', problem: 'true or false is required' });
    }
    const rights = input.rights === undefined ? undefined : parseRightsMatrix(input.rights, 'rights', 'invalidAccountInput');
    const account: AccountRecord = { id: randomId(12), username, passwordHash: hashPassword(password), admin: input.admin === true, createdAt: Date.now() };
    if (rights !== undefined) account.rights = rights;
    await this.storage.access.createAccount(account);
    return accountView(account);
  }

  async list(): Promise<AccountView[]> {
    return (await this.storage.access.listAccounts()).map(accountView);
  }

  async byUsername(username: string): Promise<AccountRecord | undefined> {
    return this.storage.access.findAccountByUsername(username);
  }

  /** Sets a new password and ends the account's sessions; false when there is no such account. */
  async setPassword(username: string, password: unknown): Promise<boolean> {
    const checked = checkNewPassword(password);
    const account = await this.storage.access.findAccountByUsername(username);
    if (!account || !(await this.storage.access.updatePassword(account.id, hashPassword(checked)))) return false;
    await this.storage.sessions.deleteForAccount(account.id);
    return true;
  }

  /**
   * A new session for the right password, whatever session the client had: a session id chosen before login
   * never becomes a logged-in one (session fixation). The session the request carried, if any, ends.
   */
  async login(username: unknown, password: unknown, previousSessionId: string | undefined): Promise<LoggedIn> {
    if (typeof username !== 'string' || username === '') throw hubError('invalidAccountInput', { field: 'username', problem: 'a non-empty string is required' });
    if (typeof password !== 'string') throw hubError('invalidAccountInput', { field: 'password', problem: 'a string is required' });
    // Longer ones cannot exist: refused without storage work or a throttle record.
    if (username.length > 64 || password.length > MAX_PASSWORD_LENGTH) throw hubError('loginFailed');
    await this.throttle.attempt(username);
    const account = await this.storage.access.findAccountByUsername(username);
    if (!(await verifyPassword(password, account?.passwordHash ?? '')) || !account) throw hubError('loginFailed');
    await this.throttle.succeeded(username);
    if (previousSessionId !== undefined) await this.storage.sessions.delete(hashToken(previousSessionId));
    const now = Date.now();
    const sessionId = newSessionId();
    await this.storage.sessions.create({ idHash: hashToken(sessionId), accountId: account.id, expiresAt: now + this.sessionTtlMs }, now);
    return { account: accountView(account), sessionId };
  }

  async logout(sessionId: string): Promise<void> {
    await this.storage.sessions.delete(hashToken(sessionId));
  }

  /** The account of a live session; 401 without one. Read from the storage each time, so a logout on any node counts at once. */
  async authenticateSession(sessionId: string | undefined): Promise<AccountRecord> {
    if (sessionId === undefined || sessionId === '' || sessionId.length > 128) throw hubError('notLoggedIn');
    const session = await this.storage.sessions.find(hashToken(sessionId), Date.now());
    const account = session && await this.storage.access.findAccountById(session.accountId);
    if (!account) throw hubError('notLoggedIn');
    return account;
  }

  /** How long a session lasts, in ms: also the cookie's lifetime. */
  get sessionTtl(): number {
    return this.sessionTtlMs;
  }
}
