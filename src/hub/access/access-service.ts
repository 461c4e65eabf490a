// Authentication of bearer tokens, and the admin account and token created on first start.
import type { RevocationWatch, Storage, TokenRecord } from '../../storage/storage.js';
import { hubError } from '../../core/errors.js';
import { randomId } from '../ids.js';
import { allRights, type Claims } from './claims.js';
import { ClaimsCache, type ClaimsCacheFigures } from './claims-cache.js';
import { type NodePeers, SingleProcess } from './node-peers.js';
import { hashPassword, hashToken, newPassword, newTokenString, TOKEN_PATTERN } from './secrets.js';
import { claimsOf, expiredAt } from './token-claims.js';

export interface AdminSettings {
  user?: string;
  password?: string;
  token?: string;
}

/** What first start created; secrets are only present when the hub generated them. */
export interface AdminBootstrap {
  user: string;
  createdAccount: boolean;
  generatedPassword?: string;
  generatedToken?: string;
}

export class AccessService {
  private readonly cache = new ClaimsCache();

  /** Deletions on any node reach the cache through this watch; while it is not live nothing is cached. */
  private readonly revocations: RevocationWatch;
  /** Counts the deletions heard: a lookup that overlapped one may have read the token before it went, and is not cached. */
  private revocationsHeard = 0;

  /** Told of every deletion heard, here or elsewhere: long-lived requests (event streams) check their token again. */
  private readonly revocationListeners = new Set<() => void>();

  /** `peers`: the node's other processes, which share the request rates and hear of deletions made here. */
  constructor(private readonly storage: Storage, private readonly peers: NodePeers = new SingleProcess()) {
    const revoked = (secretHash?: string) => {
      this.revocationsHeard++;
      if (secretHash === undefined) this.cache.clear();
      else this.cache.forget(secretHash);
      for (const listener of this.revocationListeners) listener();
    };
    this.revocations = storage.access.watchRevocations(revoked);
    peers.onRevocation(revoked);
  }

  /** This process's token cache lookups (GET /metrics). */
  cacheFigures(): ClaimsCacheFigures {
    return this.cache.figures();
  }

  /** Resolves a bearer token to its claims; 401 when missing, unknown or expired. */
  async authenticate(token: string | undefined): Promise<Claims> {
    if (!token) throw hubError('missingCredentials');
    if (!TOKEN_PATTERN.test(token)) throw hubError('invalidCredentials');
    const secretHash = hashToken(token);
    const now = Date.now();
    // A cached token was confirmed by every deletion heard so far (each evicts it); a looked-up one by those heard before the lookup.
    const heard = this.revocationsHeard;
    const claims = this.cache.get(secretHash, now)?.claims ?? await this.lookUp(secretHash, now);
    if (expiredAt(claims, now)) throw hubError('invalidCredentials');
    const perMinute = claims.limits?.maxRequestsPerMinute;
    if (perMinute !== undefined && perMinute > 0) {
      const wait = await this.peers.takeRequest(claims.tid, perMinute);
      if (wait !== undefined) throw hubError('tokenRateLimited', { limit: perMinute }, undefined, wait);
    }
    // The request's own copy: `revocationsHeard` moves with it (stillValid), the cached claims are shared.
    return { ...claims, revocationsHeard: heard };
  }

  private async lookUp(secretHash: string, now: number): Promise<Claims> {
    const heard = this.revocationsHeard;
    const record = await this.storage.access.findTokenBySecretHash(secretHash);
    if (!record) throw hubError('invalidCredentials');
    const claims = claimsOf(record);
    if (this.revocations.live() && heard === this.revocationsHeard) this.cache.set(secretHash, claims, now);
    return claims;
  }

  /**
   * The claims of a token by its id, read from the storage (never the cache): undefined when it was deleted or has
   * expired. Work done later in a token's name (delivering a subscription, running a job) looks them up again before
   * each step.
   */
  async claimsOfToken(tid: string): Promise<Claims | undefined> {
    const record = await this.storage.access.findTokenByTid(tid);
    if (!record) return undefined;
    const claims = claimsOf(record);
    return expiredAt(claims, Date.now()) ? undefined : claims;
  }

  /** Calls `listener` whenever some token may have been deleted; returns the call that stops it. */
  onRevocation(listener: () => void): () => void {
    this.revocationListeners.add(listener);
    return () => { this.revocationListeners.delete(listener); };
  }

  /**
   * Whether the token of a request's claims is still good, for work that outlives its authentication (long reads,
   * decided-pages.ts; event streams, event-feed.ts): not expired, and not deleted. Deletions on any node are heard
   * (`watchRevocations`): while none was heard since the token was last confirmed and the watch is live, that needs
   * no lookup; otherwise the token is read from the storage, and a token found confirms the claims up to the
   * deletions heard before that read.
   */
  async stillValid(claims: Claims): Promise<boolean> {
    const now = Date.now();
    if (expiredAt(claims, now)) return false;
    if (claims.revocationsHeard === this.revocationsHeard && this.revocations.live()) return true;
    const heard = this.revocationsHeard;
    // A token cannot be changed once made, so its expiry is the claims'; only whether it still exists is read.
    if ((await this.storage.access.findTokenByTid(claims.tid)) === undefined) return false;
    claims.revocationsHeard = heard;
    return true;
  }

  /**
   * Deletes a token from the storage and from the caches of this node's processes: the one path every deletion
   * takes, so that it stops working at once. Returns what was deleted; undefined when it was gone already.
   */
  async deleteToken(tid: string): Promise<TokenRecord | undefined> {
    const deleted = await this.storage.access.deleteToken(tid);
    if (!deleted) return undefined;
    this.cache.forget(deleted.secretHash);
    await this.peers.announceRevocation(deleted.secretHash);
    return deleted;
  }

  /** Ensures the admin account and an all-rights token exist, using the configured values where given. */
  async bootstrapAdmin(settings: AdminSettings): Promise<AdminBootstrap> {
    const user = settings.user ?? 'admin';
    const result: AdminBootstrap = { user, createdAccount: false };
    let account = await this.storage.access.findAccountByUsername(user);
    if (!account) {
      const password = settings.password ?? newPassword();
      if (!settings.password) result.generatedPassword = password;
      const created = { id: randomId(12), username: user, passwordHash: hashPassword(password), admin: true, createdAt: Date.now() };
      account = await this.createOnce(() => this.storage.access.createAccount(created),
        () => this.storage.access.findAccountByUsername(user)) ?? created;
      result.createdAccount = account === created;
      if (!result.createdAccount) delete result.generatedPassword;
    }
    const configuredToken = settings.token;
    if (configuredToken !== undefined && !TOKEN_PATTERN.test(configuredToken)) {
      throw new Error('HUB_ADMIN_TOKEN may only contain the characters A-Z a-z 0-9 . _ ~ -');
    }
    const needsToken = configuredToken !== undefined
      ? !(await this.storage.access.findTokenBySecretHash(hashToken(configuredToken)))
      : result.createdAccount;
    if (needsToken) {
      const token = configuredToken ?? newTokenString();
      if (configuredToken === undefined) result.generatedToken = token;
      const secretHash = hashToken(token);
      const aid = account.id;
      await this.createOnce(() => this.storage.access.createToken({
        tid: randomId(16),
        aid,
        secretHash,
        claims: { cid: aid, urm: allRights(), iat: Math.floor(Date.now() / 1000), description: 'admin token created at first start' },
        bootstrap: true,
      }), () => this.storage.access.findTokenBySecretHash(secretHash));
    }
    // The configured token is the only bootstrap token: one set before (or generated at first start) stops working.
    // Also on a restart with the same token, so that a start that died between creating and revoking completes.
    if (configuredToken !== undefined) await this.storage.access.revokeBootstrapTokens(hashToken(configuredToken));
    return result;
  }

  /**
   * Nodes starting together on a fresh database race to create the same record: the loser's insert
   * fails, and the winner's record (returned by `existing`) is used instead.
   */
  private async createOnce<T>(create: () => Promise<void>, existing: () => Promise<T | undefined>): Promise<T | undefined> {
    try {
      await create();
      return undefined;
    } catch (error) {
      const winner = await existing();
      if (winner === undefined) throw error;
      return winner;
    }
  }
}
