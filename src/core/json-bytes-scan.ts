// Finding the ends of JSON values in UTF-8 bytes without parsing them: for reshaping stored feature texts as they stream.
// JSON's structural characters are ASCII, and no byte of a multi-byte UTF-8 sequence is, so bytes can be scanned as characters.

import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-bytes.js';

/**
 * The index after the JSON string that starts (with its quote) at `start`. A loop over the bytes: a feature's strings
 * are short, and a native indexOf per string (and per escaped quote) cost more than reading their bytes here.
 */
export function stringEnd(bytes: Buffer, start: number): number {
  const length = bytes.length;
  for (let at = start + 1; at < length; at++) {
    const byte = bytes[at];
    if (byte === QUOTE) return at + 1;
    // A backslash escapes the byte after it (a quote, a backslash, or the letter of \n, \uXXXX and the like).
    if (byte === BACKSLASH) at++;
  }
  throw new SyntaxError(`unterminated string at ${start}`);
}

/**
 * The index after the JSON value that starts at `start` in well-formed JSON without whitespace (as JSON.stringify
 * writes it): a string, an object or array with everything in it, or a scalar up to the next `,`, `]` or `}`.
 */
export function valueEnd(bytes: Buffer, start: number): number {
  const first = bytes[start];
  if (first === QUOTE) return stringEnd(bytes, start);
  let at = start;
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    while (at < bytes.length) {
      const byte = bytes[at];
      if (byte === QUOTE) {
        at = stringEnd(bytes, at);
        continue;
      }
      if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth += 1;
      else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        depth -= 1;
        if (depth === 0) return at + 1;
      }
      at += 1;
    }
    throw new SyntaxError(`unterminated value at ${start}`);
  }
  while (at < bytes.length) {
    const byte = bytes[at];
    if (byte === COMMA || byte === CLOSE_BRACE || byte === CLOSE_BRACKET) break;
    at += 1;
  }
  return at;
}

/** Whether `bytes` hold `part` at `at` (compared byte by byte: a native call costs more for parts this short). */
export function bytesAt(bytes: Uint8Array, at: number, part: Uint8Array): boolean {
  if (at + part.length > bytes.length) return false;
  for (let index = 0; index < part.length; index++) if (bytes[at + index] !== part[index]) return false;
  return true;
}
