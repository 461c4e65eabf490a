// Unit tests for the keyset pager's bounds: it reads no page once its signal aborted, and fails a read whose pages ran past the deadline.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { keysetPages } from '../../src/storage/shared/keyset-pages.js';
import type { ReadBounds } from '../../src/storage/shared/read-bounds.js';
import { StorageError } from '../../src/storage/storage-error.js';

/** Pages of consecutive sequence numbers out of `total`, each fetch recorded in `fetches`; `work` runs inside each fetch. */
function pager(total: number, fetches: number[], bounds: ReadBounds, work: () => void = () => {}, asynchronous = false): AsyncIterable<number[]> {
  const read = (after: number, size: number): number[] => {
    fetches.push(after);
    work();
    return Array.from({ length: Math.max(0, Math.min(size, total - after)) }, (_, i) => after + i + 1);
  };
  const fetch = asynchronous ? async (after: number, size: number) => read(after, size) : read;
  return keysetPages(total, 0, 10, fetch, (page) => ({ count: page.length, lastSeq: page[page.length - 1] ?? 0 }), bounds);
}

function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

const isTimeout = (error: unknown) => error instanceof StorageError && error.failure === 'timeout';

describe('keysetPages', () => {
  test('reads every page without a deadline', async () => {
    const fetches: number[] = [];
    const seen: number[] = [];
    for await (const page of pager(25, fetches, { deadlineMs: 0 })) seen.push(...page);
    assert.equal(seen.length, 25);
    assert.deepEqual(fetches, [0, 10, 20]);
  });

  test('a first page size and a later one: every feature once, in order, across both boundaries', async () => {
    const fetches: Array<[number, number]> = [];
    const seen: number[] = [];
    const fetch = async (after: number, size: number) => {
      fetches.push([after, size]);
      return Array.from({ length: Math.max(0, Math.min(size, 57 - after)) }, (_, i) => after + i + 1);
    };
    for await (const page of keysetPages(50, 0, { first: 5, next: 20 }, fetch, (page) => ({ count: page.length, lastSeq: page[page.length - 1] ?? 0 }), { deadlineMs: 0 })) {
      seen.push(...page);
    }
    assert.deepEqual(seen, Array.from({ length: 50 }, (_, i) => i + 1));
    assert.deepEqual(fetches, [[0, 5], [5, 20], [25, 20], [45, 5]]);
  });

  test('requests no further page once the signal aborted (an asynchronous database had the second requested)', async () => {
    for (const asynchronous of [false, true]) {
      const controller = new AbortController();
      const fetches: number[] = [];
      const pages = pager(100, fetches, { deadlineMs: 0, signal: controller.signal }, () => {}, asynchronous)[Symbol.asyncIterator]();
      assert.equal((await pages.next()).done, false);
      controller.abort();
      await assert.rejects(async () => { while (!(await pages.next()).done); }, isTimeout);
      // An asynchronous database works on the second page while the first streams; a synchronous one reads it only when asked.
      assert.deepEqual(fetches, asynchronous ? [0, 10] : [0]);
    }
  });

  test('reads nothing for a signal that aborted before the read', async () => {
    const fetches: number[] = [];
    const pages = pager(100, fetches, { deadlineMs: 0, signal: AbortSignal.abort() });
    await assert.rejects(async () => { for await (const page of pages) assert.fail(`read ${page.length}`); }, isTimeout);
    assert.deepEqual(fetches, []);
  });

  test('fails a read whose first page ran past the deadline, before handing it out', async () => {
    const fetches: number[] = [];
    const pages = pager(100, fetches, { deadlineMs: 1 }, () => busy(5));
    await assert.rejects(async () => { for await (const page of pages) assert.fail(`read ${page.length}`); }, isTimeout);
    assert.deepEqual(fetches, [0]);
  });

  // Each page alone stays within the deadline: only their sum passes it.
  test('counts the time of all pages against the deadline', async () => {
    const fetches: number[] = [];
    const seen: number[] = [];
    await assert.rejects(async () => {
      for await (const page of pager(1000, fetches, { deadlineMs: 40 }, () => busy(15))) seen.push(...page);
    }, isTimeout);
    assert.ok(fetches.length < 100, `stopped after ${fetches.length} of 100 pages`);
    assert.ok(seen.length < 1000);
  });
});
