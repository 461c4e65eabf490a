// Keyset pagination over insertion order, shared by both engines and both read shapes (rows and joined text).

export interface PageMeasure {
  count: number;
  /** The insertion sequence of the page's last feature. */
  lastSeq: number;
}

/**
 * Reads up to `limit` features after `afterSeq`, a page of at most `pageSize` at a time: `fetch` reads one
 * page after a sequence number. The next page is requested before the current one is handed out, so a
 * database works on it while the caller streams; a caller that stops early stops the reading too.
 */
export async function* keysetPages<T>(
  limit: number,
  afterSeq: number,
  pageSize: number,
  fetch: (after: number, size: number) => T | Promise<T>,
  measure: (page: T) => PageMeasure,
): AsyncIterable<T> {
  let remaining = limit;
  let size = Math.min(pageSize, remaining);
  let pending: Promise<T> | undefined = Promise.resolve(fetch(afterSeq, size));
  try {
    while (pending) {
      const page: T = await pending;
      const { count, lastSeq } = measure(page);
      remaining -= count;
      pending = undefined;
      if (count === size && remaining > 0) {
        size = Math.min(pageSize, remaining);
        pending = Promise.resolve(fetch(lastSeq, size));
      }
      if (count > 0) yield page;
    }
  } finally {
    // A reader that stops early leaves a prefetched page nobody awaits.
    pending?.catch(() => {});
  }
}
