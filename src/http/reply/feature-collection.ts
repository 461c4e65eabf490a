// Writes FeatureCollection bodies from ready feature texts, in chunks, without re-parsing them.
import { Readable } from 'node:stream';
import type { WriteResult } from '../../hub/writes/write-plan.js';

/** `,"name":value` for each member, to follow the members already written. */
export function members(values: Record<string, unknown>): string {
  let text = '';
  for (const [key, value] of Object.entries(values)) text += `,${JSON.stringify(key)}:${JSON.stringify(value)}`;
  return text;
}

/**
 * A FeatureCollection without its closing brace, so that members can still follow (the ETag of a read comes after
 * what it hashes). `head` are members before the features (JSON-FG's); pages are comma-joined feature texts, copied as
 * they come (strings or UTF-8 bytes); `trailer` is read once they are done.
 */
export async function* openCollection(pages: AsyncIterable<string | Buffer> | Iterable<string | Buffer>, trailer: () => Record<string, unknown>,
  head: Record<string, unknown> = {}): AsyncIterable<string | Buffer> {
  yield `{"type":"FeatureCollection"${members(head)},"features":[`;
  let first = true;
  for await (const page of pages) {
    if (page.length === 0) continue;
    if (!first) yield ',';
    yield page;
    first = false;
  }
  yield ']' + members(trailer());
}

/** Write answers hold their feature texts in a list; joining them a page at a time keeps big answers streaming. */
function* pagesOf(texts: string[], size = 2000): Iterable<string> {
  for (let start = 0; start < texts.length; start += size) yield texts.slice(start, start + size).join(',');
}

async function* closed(open: AsyncIterable<string | Buffer>): AsyncIterable<string | Buffer> {
  yield* open;
  yield '}';
}

/**
 * Write answers with at most this many characters of feature texts are sent as one string. @fastify/compress compresses
 * every stream, however short, but leaves a string under its threshold (1 KiB) alone: a gzip stream for the answer of a
 * one-feature write cost the hub 1.3 ms of CPU on top of 2.6 (docs/decisions.md, "Requests").
 */
const WHOLE_ANSWER_CHARS = 64 * 1024;

/** The write response of API.md 4.7: features, then the id lists that are not empty. */
export function writeResultBody(result: WriteResult): Readable | string {
  const lists = () => {
    const named: Record<string, unknown> = {};
    if (result.inserted.length > 0) named.inserted = result.inserted;
    if (result.updated.length > 0) named.updated = result.updated;
    if (result.deleted.length > 0) named.deleted = result.deleted;
    if (result.failed.length > 0) named.failed = result.failed;
    return named;
  };
  let chars = 0;
  for (const text of result.features) chars += text.length;
  if (chars <= WHOLE_ANSWER_CHARS) return `{"type":"FeatureCollection","features":[${result.features.join(',')}]${members(lists())}}`;
  return Readable.from(closed(openCollection(pagesOf(result.features), lists)), { objectMode: false });
}
