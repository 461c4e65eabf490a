// Token records of the Token API (API.md 9): issued for an account with no more rights than it holds, listed, looked up, deleted.
import { hubError } from '../../core/errors.js';
import type { AccountRecord, Storage, TokenRecord } from '../../storage/storage.js';
import { randomId } from '../ids.js';
import type { AccessService } from './access-service.js';
import { allRights, type RightsMatrix } from './claims.js';
import { narrowRights } from './rights-narrowing.js';
import { hashToken, newTokenString, TOKEN_PATTERN } from './secrets.js';
import { parseTokenInput } from './token-input.js';

/** A token as the Token API shows it: never its secret or the secret's hash. */
export interface TokenView {
  tid: string;
  aid: string;
  cid: string;
  urm: RightsMatrix;
  iat: number;
  exp?: number;
  limits: Record<string, unknown>;
  description: string;
  awsPlanId: string;
  metadata: Record<string, unknown>;
}

/** The plan of tokens created without one; the field is opaque to the hub (API.md 9). */
const DEFAULT_PLAN = 'default';

function tokenView(record: TokenRecord): TokenView {
  const claims = record.claims;
  const view: TokenView = {
    tid: record.tid,
    aid: record.aid,
    cid: typeof claims.cid === 'string' ? claims.cid : record.aid,
    urm: (claims.urm ?? {}) as RightsMatrix,
    iat: typeof claims.iat === 'number' ? claims.iat : 0,
    limits: (claims.limits ?? {}) as Record<string, unknown>,
    description: typeof claims.description === 'string' ? claims.description : '',
    awsPlanId: typeof claims.awsPlanId === 'string' ? claims.awsPlanId : DEFAULT_PLAN,
    metadata: (claims.metadata ?? {}) as Record<string, unknown>,
  };
  if (typeof claims.exp === 'number') view.exp = claims.exp;
  return view;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);
const expired = (record: TokenRecord) => typeof record.claims.exp === 'number' && record.claims.exp <= nowSeconds();

export class TokenService {
  constructor(private readonly storage: Storage, private readonly access: AccessService) {}

  /**
   * A new token for the account. Its `urm` is what was asked for (all rights when nothing was) narrowed to what the
   * account holds; an admin's is what was asked for. The bearer string is in the answer only.
   */
  async create(account: AccountRecord, body: Record<string, unknown>): Promise<TokenView & { token: string }> {
    const now = nowSeconds();
    const input = parseTokenInput(body, now);
    const requested = input.urm ?? allRights();
    const urm = account.admin ? requested : narrowRights(requested, account.id, account.rights as RightsMatrix | undefined);
    const claims: Record<string, unknown> = { cid: input.cid ?? account.id, urm, iat: now };
    if (input.exp !== undefined) claims.exp = input.exp;
    if (input.limits !== undefined) claims.limits = input.limits;
    if (input.description !== undefined) claims.description = input.description;
    if (input.metadata !== undefined) claims.metadata = input.metadata;
    if (input.awsPlanId !== undefined) claims.awsPlanId = input.awsPlanId;
    const token = newTokenString();
    const record: TokenRecord = { tid: randomId(16), aid: account.id, secretHash: hashToken(token), claims };
    await this.storage.access.createToken(record);
    return { ...tokenView(record), token };
  }

  async list(account: AccountRecord): Promise<TokenView[]> {
    return (await this.storage.access.listTokens(account.id)).map(tokenView);
  }

  /** The public lookup by bearer string (API.md 9): one indexed read; 412 for a malformed, unknown or expired token. */
  async lookUp(token: string): Promise<TokenView> {
    const record = TOKEN_PATTERN.test(token) && token.length <= 256 ? await this.storage.access.findTokenBySecretHash(hashToken(token)) : undefined;
    if (!record || expired(record)) throw hubError('invalidTokenId');
    return tokenView(record);
  }

  /** Deletes one of the account's tokens, named by its bearer string or its tid (an admin may name any); 404 otherwise. */
  async delete(account: AccountRecord, tokenOrTid: string): Promise<void> {
    const record = await this.find(tokenOrTid);
    if (!record || (record.aid !== account.id && !account.admin)) throw hubError('tokenNotFound');
    if (!(await this.access.deleteToken(record.tid))) throw hubError('tokenNotFound');
  }

  private async find(tokenOrTid: string): Promise<TokenRecord | undefined> {
    if (!TOKEN_PATTERN.test(tokenOrTid) || tokenOrTid.length > 256) return undefined;
    return await this.storage.access.findTokenBySecretHash(hashToken(tokenOrTid)) ?? this.storage.access.findTokenByTid(tokenOrTid);
  }
}
