// Keyset pagination over insertion order, shared by both engines and both read shapes (rows and joined text).
import { performance } from 'node:perf_hooks';
import { checkDeadline, type ReadBounds, throwIfCancelled } from './read-bounds.js';
import { chargeTurn, nextTurn } from './read-turns.js';

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
    const timedResult = result.finally(() => { spent += performance.now() - start; });
    // A page read ahead is awaited only when its turn comes. If it fails before then (its read cancelled because the
    // client went away, while the consumer is busy elsewhere, e.g. deciding the read again), that failure must not
    // count as unhandled: Node would stop the process. Awaiting it later still sees the failure.
    timedResult.catch(() => undefined);
    return timedResult;
  };
  const sizes: PageSizes = typeof pageSize === 'number' ? { first: pageSize, next: pageSize } : pageSize;
  let remaining = limit;
  let size = Math.min(sizes.first, remaining);
  // Since when this read has held the event loop without waiting for a turn: its page, and the caller's work on it.
  let holdingSince = performance.now();
  let pending: T | Promise<T> | undefined = timed(afterSeq, size);
  // A database answering asynchronously works on the next page while this one streams. A synchronous one (SQLite)
  // would only block the event loop before the current page goes out, so its next page waits. Its pages would
  // otherwise resolve at once, and one large read would run from its first page to its last within one turn of the
  // event loop while no socket is read: between pages it waits for a turn with time left (`read-turns.ts`).
  // A reader that stops early leaves a page read ahead that nobody awaits: it was marked handled when asked for.
  const prefetch = pending instanceof Promise;
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
      chargeTurn(performance.now() - holdingSince);
      await nextTurn();
      holdingSince = performance.now();
      pending = timed(lastSeq, size);
    }
  }
}
