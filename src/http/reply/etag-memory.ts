// The node's memory of the ETag last computed for each answer key, so that a repeated If-None-Match costs no query.

/**
 * About 200 bytes an entry, so at most a few MiB. The least recently used key goes first: the map tiles of one
 * area and the pages a client keeps polling stay while one-off reads pass through.
 */
const MAX_ENTRIES = 10_000;

/**
 * An answer key names the content version and the request (read-pipeline.ts answerKey): a write changes the version,
 * so an entry is never stale, only unused. Entries are never removed for correctness, only for room.
 */
export class EtagMemory {
  private readonly tags = new Map<string, string>();

  get(key: string): string | undefined {
    const etag = this.tags.get(key);
    if (etag !== undefined) {
      this.tags.delete(key);
      this.tags.set(key, etag);
    }
    return etag;
  }

  set(key: string, etag: string): void {
    this.tags.delete(key);
    this.tags.set(key, etag);
    if (this.tags.size <= MAX_ENTRIES) return;
    const oldest = this.tags.keys().next();
    if (!oldest.done) this.tags.delete(oldest.value);
  }
}

/** One per process, which is one node: the keys name the spaces' content, so nothing in it belongs to one server. */
export const etagMemory = new EtagMemory();
