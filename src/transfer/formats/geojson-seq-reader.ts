// Reads GeoJSONSeq / newline-delimited GeoJSON: one Feature per line (RFC 8142 record separators allowed), line by line; a resumed load starts at the byte its checkpoint names, or counts the lines it skips without parsing them.
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import type { Readable } from 'node:stream';
import { type FormatReader, type InputSource, type ResumePoint, sendsAsRead, toFeature } from '../transfer-feature.js';

const LF = 0x0a;
const CR = 0x0d;

/**
 * The lines of a stream with the offset of the byte after each (its terminator included), `first` being the stream's
 * first byte in the file. Line ends are those of readline: LF, CR LF, and a lone CR. A line that spans chunks is kept
 * as its parts and joined once, so that a very long line costs no more than its length.
 */
async function* linesOf(stream: Readable, first: number): AsyncGenerator<{ text: string; end: number }> {
  let parts: Buffer[] = [];
  /** The file offset of the chunk's first byte. */
  let offset = first;
  /** The last chunk ended with a CR that ends the line in `parts`: whether an LF follows is known from the next chunk. */
  let crEnded = false;
  const joined = (tail: Buffer) => (parts.length === 0 ? tail : Buffer.concat([...parts, tail])).toString('utf8');
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    if (crEnded) {
      crEnded = false;
      start = chunk[0] === LF ? 1 : 0;
      yield { text: joined(Buffer.alloc(0)), end: offset + start };
      parts = [];
    }
    let lf = chunk.indexOf(LF, start);
    let cr = chunk.indexOf(CR, start);
    while (lf !== -1 || cr !== -1) {
      const atCr = cr !== -1 && (lf === -1 || cr < lf);
      const stop = atCr ? cr : lf;
      if (atCr && cr === chunk.length - 1) {
        parts.push(chunk.subarray(start, stop));
        crEnded = true;
        start = chunk.length;
        break;
      }
      const after = atCr && chunk[cr + 1] === LF ? cr + 2 : stop + 1;
      yield { text: parts.length === 0 ? chunk.toString('utf8', start, stop) : joined(chunk.subarray(start, stop)), end: offset + after };
      parts = [];
      start = after;
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
    offset += chunk.length;
  }
  if (crEnded || parts.length > 0) yield { text: joined(Buffer.alloc(0)), end: offset };
}

/** Whether a file can be read from `from`: a checkpoint's offset must fall just after a line end of this file. */
function startsLine(source: InputSource, from: ResumePoint): boolean {
  if (source.path === undefined) return false;
  if (from.byte === 0) return true;
  if (from.byte > statSync(source.path).size) return false;
  const before = Buffer.alloc(1);
  const descriptor = openSync(source.path, 'r');
  try {
    readSync(descriptor, before, 0, 1, from.byte - 1);
  } finally {
    closeSync(descriptor);
  }
  return before[0] === LF || before[0] === CR;
}

export const readGeoJsonSeq: FormatReader = async function* (source, options) {
  const from = options.from !== undefined && startsLine(source, options.from) ? options.from : undefined;
  let line = from?.line ?? 0;
  let skip = from === undefined ? options.skip ?? 0 : 0;
  for await (const { text: raw, end } of linesOf(source.open(from?.byte), from?.byte ?? 0)) {
    line++;
    const text = raw.replace(/^\uFEFF/, '').replace(/\u001e/g, '').trim();
    if (text === '') continue;
    // Every non-empty line is one item, a feature or a bad record: it is counted without being read.
    if (skip > 0) {
      skip--;
      continue;
    }
    const position = `line ${line}`;
    const at = { byte: end, line };
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      yield { error: `not valid JSON (${(error as Error).message})`, position, at };
      continue;
    }
    const result = toFeature(value, options.idProperty);
    if (typeof result === 'string') yield { error: result, position, at };
    else yield sendsAsRead(value, options.idProperty) ? { feature: result, position, text, at } : { feature: result, position, at };
  }
};
