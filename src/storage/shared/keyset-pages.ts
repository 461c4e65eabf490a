// Keyset pagination over insertion order, shared by both engines and both read shapes (rows and joined text).
import { performance } from 'node:perf_hooks';
import { checkDeadline, type ReadBounds, throwIfCancelled } from './read-bounds.js';

export interface PageMeasure {
  count: number;
  /** The insertion sequence of the page's last feature. */
  lastSeq: number;
}

/**
 * Reads up to `limit` features after `afterSeq`, a page of at most `pageSize` at a time: `fetch` reads one
 * page after a sequence number. The next page is requested before the current one is handed out, so a
 * database works on it while the caller streams; a caller that stops early stops the reading too.
 * The time the pages take in the database adds up against `bounds.deadlineMs`, checked as each page
 * arrives: a page that ends past it fails the read instead of being handed out, and no further page is
 * read. A page is not requested once `bounds.signal` has aborted.
 */
export async function* keysetPages<T>(
  limit: number,
  afterSeq: number,
  pageSize: number,
  fetch: (after: number, size: number) => T | Promise<T>,
  measure: (page: T) => PageMeasure,
  bounds: ReadBounds,
): AsyncIterable<T> {
  let spent = 0;
  const timed = (after: number, size: number): Promise<T> => {
    throwIfCancelled(bounds.signal);
    const start = performance.now();
    return Promise.resolve(fetch(after, size)).finally(() => { spent += performance.now() - start; });
  };
  let remaining = limit;
  let size = Math.min(pageSize, remaining);
  let pending: Promise<T> | undefined = timed(afterSeq, size);
  try {
    while (pending) {
      const page: T = await pending;
      checkDeadline(spent, bounds);
      const { count, lastSeq } = measure(page);
      remaining -= count;
      pending = undefined;
      if (count === size && remaining > 0) {
        size = Math.min(pageSize, remaining);
        pending = timed(lastSeq, size);
      }
      if (count > 0) yield page;
    }
  } finally {
    // A reader that stops early leaves a prefetched page nobody awaits.
    pending?.catch(() => {});
  }
}
