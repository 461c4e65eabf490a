// The node's cache of whole read answers (tiles, bbox, spatial), keyed by the content version of the spaces read and the request: docs/cache-and-changed-tiles.md.
import { totalmem } from 'node:os';
import { LRUCache } from 'lru-cache';

/** A body compressed for the clients that ask so (`gzip`, `deflate`). */
export interface EncodedBody {
  encoding: string;
  body: Buffer;
}

/**
 * An answer as sent: its body bytes and its ETag (the rest of its headers follow from the space, as for any answer),
 * and the body as last compressed for a client, so that browsers, which all ask for gzip, do not cost a compression per hit.
 */
export interface CachedAnswer {
  body: Buffer;
  etag: string;
  encoded?: EncodedBody;
}

/** What an operator reads of the cache (GET /hub): this process's figures since it started. */
export interface CacheFigures {
  maxSize: number;
  size: number;
  entries: number;
  hits: number;
  misses: number;
  /** hits / (hits + misses), 0 before the first lookup. */
  hitRate: number;
}

/** The key, the entry object and the map's bookkeeping, counted with the body so that many tiny answers cannot outgrow the bound. */
const ENTRY_OVERHEAD = 200;

/** At most this share of the cache per answer: one large answer never pushes out everything else. */
const LARGEST_SHARE = 8;

/** Requests remembered as answered from or into the cache lately (AnswerCache.answeredLately): 10,000 names of about 200 bytes. */
const REMEMBERED_REQUESTS = 10_000;

/** The default total: 1/16 of the machine's memory shared by the node's processes, at most 256 MiB in each. */
export function defaultCacheSize(processes: number): number {
  return Math.min(256 * 1024 ** 2, Math.floor(totalmem() / 16 / Math.max(1, processes)));
}

/**
 * One per process. A key names the content version of every space an answer reads (their revisions, which every
 * committed write raises, read from the storage with the space on each request) and the normalized request, so an
 * entry is never stale: a write on any node makes the next read's key new, and old entries only wait to be evicted.
 * Keys are looked up after the caller's rights have been decided: an entry serves only callers who may read it.
 */
export class AnswerCache {
  private readonly entries?: LRUCache<string, CachedAnswer>;
  /** The requests (without the content version) of answers kept lately: a hint, as their entries may be gone. */
  private readonly requests?: LRUCache<string, true>;
  private hits = 0;
  private misses = 0;

  /** `maxSize` in bytes; 0 turns the cache off. */
  constructor(readonly maxSize: number) {
    if (maxSize > 0) {
      this.entries = new LRUCache<string, CachedAnswer>({
        maxSize,
        maxEntrySize: Math.max(1, Math.floor(maxSize / LARGEST_SHARE)),
        sizeCalculation: (answer, key) => answer.body.length + (answer.encoded?.body.length ?? 0) + key.length + answer.etag.length + ENTRY_OVERHEAD,
      });
      this.requests = new LRUCache<string, true>({ max: REMEMBERED_REQUESTS });
    }
  }

  get enabled(): boolean {
    return this.entries !== undefined;
  }

  get(key: string): CachedAnswer | undefined {
    if (!this.entries) return undefined;
    const answer = this.entries.get(key);
    if (answer) this.hits++;
    else this.misses++;
    return answer;
  }

  /** An answer larger than its share is not kept (lru-cache refuses it). `request` is the key without the content version. */
  set(key: string, answer: CachedAnswer, request: string): void {
    this.entries?.set(key, answer);
    this.requests?.set(request, true);
  }

  /**
   * Whether an answer of `request` (at any content version) was kept lately, so that its next read will likely be
   * answered from the cache: such a read looks its space up alone rather than with the first page of its features,
   * which a hit would not use (SpaceResolver.openWithArea). A hint only: the entry may be gone or of an older version.
   */
  answeredLately(request: string): boolean {
    return this.requests?.has(request) ?? false;
  }

  /** Keeps the compressed body with the entry `answer` still is (its size counted as the body's); a newer answer of the key is left alone. */
  setEncoded(key: string, answer: CachedAnswer, encoded: EncodedBody): void {
    if (this.entries?.peek(key) === answer) this.entries.set(key, { ...answer, encoded });
  }

  figures(): CacheFigures {
    const lookups = this.hits + this.misses;
    return {
      maxSize: this.maxSize,
      size: this.entries?.calculatedSize ?? 0,
      entries: this.entries?.size ?? 0,
      hits: this.hits,
      misses: this.misses,
      hitRate: lookups === 0 ? 0 : Math.round((this.hits / lookups) * 10_000) / 10_000,
    };
  }
}
