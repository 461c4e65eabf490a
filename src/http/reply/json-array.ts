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

export function jsonArrayBody(pages: AsyncIterable<unknown[]>): Readable {
  return Readable.from(arrayText(pages), { objectMode: false });
}
