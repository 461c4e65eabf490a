// Keyset pagination over insertion order, shared by both engines and both read shapes (rows and joined text).
import { performance } from 'node:perf_hooks';
import { checkDeadline, type ReadBounds, throwIfCancelled } from './read-bounds.js';

export interface PageMeasure {
  count: number;
  /** The insertion sequence of the page's last feature. */
  lastSeq: number;
}

/** Rows per page: the first page's, and every later page's (larger where each page repeats a costly search). */
export interface PageSizes {
  first: number;
  next: number;
}

/**
 * A synchronous engine's pages resolve at once, so a reader awaiting them never leaves the microtask queue: one large
 * read ran from its first page to its last within one turn of the event loop, and Node takes new connections and
 * reads sockets only between turns. At 16 connections reading 10,000-feature boxes, connections waited 15 to 24 s for
 * their first answer while others were served many times (p99 4 times p50). Between pages a synchronous read waits for
 * the next turn (setImmediate, after the sockets were polled), so concurrent reads take a page each in turn.
 */
const turnOfTheEventLoop = () => new Promise<void>((resolve) => { setImmediate(resolve); });

/**
 * Reads up to `limit` features after `afterSeq`, a page of at most `pageSize` at a time (`first` then `next`
 * when two sizes are given): `fetch` reads one page after a sequence number. An asynchronous `fetch` gets the next page requested before the current one
 * is handed out, so the database works on it while the caller streams; a caller that stops early stops the
 * reading too.
 * The time the pages take in the database adds up against `bounds.deadlineMs`, checked as each page
 * arrives: a page that ends past it fails the read instead of being handed out, and no further page is
 * read. A page is not requested once `bounds.signal` has aborted.
 */
export async function* keysetPages<T>(
  limit: number,
  afterSeq: number,
  pageSize: number | PageSizes,
  fetch: (after: number, size: number) => T | Promise<T>,
  measure: (page: T) => PageMeasure,
  bounds: ReadBounds,
): AsyncIterable<T> {
  let spent = 0;
  const timed = (after: number, size: number): T | Promise<T> => {
    throwIfCancelled(bounds.signal);
    const start = performance.now();
    const result = fetch(after, size);
    if (!(result instanceof Promise)) {
      spent += performance.now() - start;
      return result;
    }
    return result.finally(() => { spent += performance.now() - start; });
  };
  const sizes: PageSizes = typeof pageSize === 'number' ? { first: pageSize, next: pageSize } : pageSize;
  let remaining = limit;
  let size = Math.min(sizes.first, remaining);
  let pending: T | Promise<T> | undefined = timed(afterSeq, size);
  // A database answering asynchronously works on the next page while this one streams. A synchronous one
  // (SQLite) would only block the event loop before the current page goes out, so its next page waits.
  const prefetch = pending instanceof Promise;
  try {
    while (pending !== undefined) {
      const page: T = await pending;
      checkDeadline(spent, bounds);
      const { count, lastSeq } = measure(page);
      remaining -= count;
      pending = undefined;
      const more = count === size && remaining > 0;
      if (more) size = Math.min(sizes.next, remaining);
      if (more && prefetch) pending = timed(lastSeq, size);
      if (count > 0) yield page;
      if (more && !prefetch) {
        await turnOfTheEventLoop();
        pending = timed(lastSeq, size);
      }
    }
  } finally {
    // A reader that stops early leaves a prefetched page nobody awaits.
    if (pending instanceof Promise) pending.catch(() => {});
  }
}
