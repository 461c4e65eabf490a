// The node's memory of the ETag last computed for each answer key, so that a repeated If-None-Match costs no query.
import { LRUCache } from 'lru-cache';

/**
 * About 200 bytes an entry, so at most a few MiB. The least recently used key goes first: the map tiles of one
 * area and the pages a client keeps polling stay while one-off reads pass through.
 */
const MAX_ENTRIES = 10_000;

/**
 * One per process, which is one node: the keys name the spaces' content, so nothing in it belongs to one server.
 * An answer key names the content version and the request (read-pipeline.ts answerKey): a write changes the
 * version, so an entry is never stale, only unused; entries go only to make room.
 */
export const etagMemory = new LRUCache<string, string>({ max: MAX_ENTRIES });
