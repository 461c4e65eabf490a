// A geometry's JSON bytes without its third coordinates when every one of them is zero: the hub pads 2D input with z = 0.
import type { ByteWriter } from '../../core/byte-writer.js';
import { CLOSE_BRACKET, COMMA, OPEN_BRACKET } from '../../core/json-bytes.js';

const MINUS = 0x2d;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const EXPONENT = 0x65;
const EXPONENT_UPPER = 0x45;

const startsNumber = (byte: number) => byte === MINUS || (byte >= DIGIT_0 && byte <= DIGIT_9);

/** Whether the JSON number in `bytes[start, end)` is zero: its mantissa has no digit but 0. */
function isZero(bytes: Uint8Array, start: number, end: number): boolean {
  let at = bytes[start] === MINUS ? start + 1 : start;
  if (at >= end) return false;
  for (; at < end; at++) {
    const byte = bytes[at];
    if (byte === EXPONENT || byte === EXPONENT_UPPER) return true;
    if (byte !== DIGIT_0 && byte !== DOT) return false;
  }
  return true;
}

/** Pairs of [cut start, cut end) found by the last scan; kept between calls so a page makes no garbage for it. */
const cuts: number[] = [];

/**
 * Appends the geometry in `bytes[start, end)` (JSON as JSON.stringify writes it) with 2D positions when every position
 * has three numbers and each third is zero; unchanged when any z is not zero, when a position has four or more numbers,
 * or when the positions are 2D already. A position is an array that starts with a number: GeoJSON nests none in one.
 * A scan of bytes instead of a parse keeps an OGC page streaming at about the cost of copying it.
 */
export function appendZeroZDropped(bytes: Uint8Array, start: number, end: number, out: ByteWriter): void {
  cuts.length = 0;
  let at = start;
  while (at < end) {
    if (bytes[at] !== OPEN_BRACKET || !startsNumber(bytes[at + 1])) {
      at += 1;
      continue;
    }
    let commas = 0;
    let second = -1;
    let close = at + 1;
    for (; close < end && bytes[close] !== CLOSE_BRACKET; close++) {
      if (bytes[close] !== COMMA) continue;
      commas += 1;
      if (commas === 2) second = close;
    }
    if (commas > 2 || (commas === 2 && !isZero(bytes, second + 1, close))) {
      out.copy(bytes, start, end);
      return;
    }
    if (commas === 2) cuts.push(second, close);
    at = close + 1;
  }
  let from = start;
  for (let cut = 0; cut < cuts.length; cut += 2) {
    out.copy(bytes, from, cuts[cut]);
    from = cuts[cut + 1];
  }
  out.copy(bytes, from, end);
}
