// Large column values from PostgreSQL that are ASCII are read as Latin-1: the same string, made outside V8's heap.
import { isAscii } from 'node:buffer';
import { BufferReader } from 'pg-protocol/dist/buffer-reader.js';

/**
 * Node makes a Latin-1 string longer than this (its EXTERN_APEX) as an external string, whose bytes are one copy in
 * memory outside V8's heap; from UTF-8 it makes a string on the heap, which at this size is a large object.
 */
const EXTERNAL_FROM = 0xfbee9;

/** BufferReader's own state, which its typings keep private. */
interface ReaderState {
  buffer: Buffer;
  offset: number;
  encoding: string;
}

/**
 * Why. pg (pg-protocol) decodes every column value with `buffer.toString('utf-8', …)`. A 10,000-feature page is one
 * text of about 2.7 MB, which V8 makes as a large object of its heap: only a full garbage collection frees it. A
 * client reading a 3.3 MB text 40 times spent 17.8 ms of CPU per read so, and 5.8 ms with this (docs/decisions.md,
 * "Large boxes on PostgreSQL: the sort in memory, the text outside V8's heap"). For ASCII bytes Latin-1 gives the
 * same string; `isAscii` checks the bytes with SIMD first (0.03 ms per MB), and any other text is decoded as before.
 * pg has no option for this, so the decoding method of its reader is wrapped, once per process; the bundle leaves
 * pg-protocol to Node's loading (scripts/bundle.mjs), so that this is the reader pg uses.
 */
export function readLargeAsciiTextsAsLatin1(): void {
  const prototype = BufferReader.prototype as BufferReader & { asciiAsLatin1?: true };
  if (prototype.asciiAsLatin1) return;
  const decode = prototype.string;
  prototype.string = function string(this: BufferReader, length: number): string {
    const reader = this as unknown as ReaderState;
    const start = reader.offset;
    const end = start + length;
    const ascii = length > EXTERNAL_FROM && reader.encoding === 'utf-8' && isAscii(reader.buffer.subarray(start, end));
    if (!ascii) return decode.call(this, length);
    reader.offset = end;
    return reader.buffer.toString('latin1', start, end);
  };
  prototype.asciiAsLatin1 = true;
}
