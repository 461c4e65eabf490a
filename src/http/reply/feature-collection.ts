// Streams FeatureCollection bodies from ready feature texts, in chunks, without re-parsing them.
import { Readable } from 'node:stream';
import type { FeatureCollectionStream } from '../../hub/features/read-pipeline.js';
import type { WriteResult } from '../../hub/features/write-plan.js';

/** Pages are comma-joined feature texts, copied to the socket as they come (strings or UTF-8 bytes). */
async function* collectionText(pages: AsyncIterable<string | Buffer> | Iterable<string | Buffer>, trailer: () => Record<string, unknown>): AsyncIterable<string | Buffer> {
  yield '{"type":"FeatureCollection","features":[';
  let first = true;
  for await (const page of pages) {
    if (page.length === 0) continue;
    if (!first) yield ',';
    yield page;
    first = false;
  }
  let end = ']';
  for (const [key, value] of Object.entries(trailer())) end += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  yield end + '}';
}

/** Write answers hold their feature texts in a list; joining them a page at a time keeps big answers streaming. */
function* pagesOf(texts: string[], size = 2000): Iterable<string> {
  for (let start = 0; start < texts.length; start += size) yield texts.slice(start, start + size).join(',');
}

const trailerOf = (result: FeatureCollectionStream) => () => ({ ...result.trailer(), etag: result.etag });

export function featureCollectionBody(result: FeatureCollectionStream): Readable {
  return Readable.from(collectionText(result.features, trailerOf(result)), { objectMode: false });
}

/** The whole body of a collection whose pages have all been read: one buffer, sent in one write. */
export async function featureCollectionBuffer(result: FeatureCollectionStream, pages: Array<string | Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of collectionText(pages, trailerOf(result))) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks);
}

/** The write response of API.md 4.7: features, then the id lists that are not empty. */
export function writeResultBody(result: WriteResult): Readable {
  return Readable.from(collectionText(pagesOf(result.features), () => {
    const lists: Record<string, unknown> = {};
    if (result.inserted.length > 0) lists.inserted = result.inserted;
    if (result.updated.length > 0) lists.updated = result.updated;
    if (result.deleted.length > 0) lists.deleted = result.deleted;
    if (result.failed.length > 0) lists.failed = result.failed;
    return lists;
  }), { objectMode: false });
}
