// A stored token as the hub uses it: its claims (API.md 8.1), its expiry, and whether it is still good at a moment.
import type { TokenRecord } from '../../storage/storage.js';
import type { Claims, RightsMatrix } from './claims.js';

/** A stored token's claims and its expiry in ms since the epoch, if it has one. */
export function claimsOf(record: TokenRecord): { claims: Claims; expiresAt?: number } {
  const { exp, cid, urm, limits } = record.claims;
  const claims: Claims = {
    tid: record.tid,
    aid: record.aid,
    cid: typeof cid === 'string' ? cid : record.aid,
    urm: urm as RightsMatrix,
    limits: limits as Claims['limits'],
    ...(typeof exp === 'number' ? { exp } : {}),
  };
  return { claims, expiresAt: typeof exp === 'number' ? exp * 1000 : undefined };
}

/** Whether a stored token has not expired at `now` (ms since the epoch); one without `exp` never does. */
export function tokenLiveAt(record: TokenRecord, now: number): boolean {
  const { exp } = record.claims;
  return typeof exp !== 'number' || exp * 1000 > now;
}
