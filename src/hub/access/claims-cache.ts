// A short-lived cache of resolved tokens, so that a client sending many requests does not cost a token lookup each.
import type { Claims } from './claims.js';

/**
 * How long a node keeps a token it resolved. A deletion on any node evicts it at once (AccessService watches
 * them); the time limit bounds what a cached entry can miss otherwise, and expiry (`exp`) is still checked on
 * every request. Reads by id are the cheapest requests, and the token lookup was a third of their storage
 * time (docs/decisions.md).
 */
export const CLAIMS_TTL_MS = 5_000;
/** Beyond this many tokens the cache starts over: memory stays bounded under a flood of distinct tokens. */
const MAX_ENTRIES = 10_000;

interface Entry {
  claims: Claims;
  cachedUntil: number;
}

/** Lookups since the process started (GET /metrics). */
export interface ClaimsCacheFigures {
  hits: number;
  misses: number;
}

export class ClaimsCache {
  private readonly entries = new Map<string, Entry>();
  private hits = 0;
  private misses = 0;

  get(secretHash: string, now: number): Entry | undefined {
    const entry = this.entries.get(secretHash);
    if (entry !== undefined && entry.cachedUntil > now) {
      this.hits++;
      return entry;
    }
    this.misses++;
    if (entry !== undefined) this.entries.delete(secretHash);
    return undefined;
  }

  figures(): ClaimsCacheFigures {
    return { hits: this.hits, misses: this.misses };
  }

  set(secretHash: string, claims: Claims, now: number): void {
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(secretHash, { claims, cachedUntil: now + CLAIMS_TTL_MS });
  }

  clear(): void {
    this.entries.clear();
  }

  /** Forgets a token at once on this node, e.g. when it is revoked here. */
  forget(secretHash: string): void {
    this.entries.delete(secretHash);
  }
}
