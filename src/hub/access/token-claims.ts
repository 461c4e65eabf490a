// A stored token as the hub uses it: its claims (API.md 8.1), and whether they have expired at a moment.
import type { TokenRecord } from '../../storage/storage.js';
import type { Claims, RightsMatrix } from './claims.js';

/** A stored token's claims, its expiry (`exp`) among them. */
export function claimsOf(record: TokenRecord): Claims {
  const { exp, cid, urm, limits } = record.claims;
  return {
    tid: record.tid,
    aid: record.aid,
    cid: typeof cid === 'string' ? cid : record.aid,
    urm: urm as RightsMatrix,
    limits: limits as Claims['limits'],
    ...(typeof exp === 'number' ? { exp } : {}),
  };
}

/** When the token expires, in ms since the epoch; undefined when it never does. */
export function expiryOf(claims: Claims): number | undefined {
  return claims.exp === undefined ? undefined : claims.exp * 1000;
}

/** Whether the token has expired at `now` (ms since the epoch); one without `exp` never does. */
export function expiredAt(claims: Claims, now: number): boolean {
  const expiry = expiryOf(claims);
  return expiry !== undefined && expiry <= now;
}
