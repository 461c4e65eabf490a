// Reading the parts of a stored feature text (plain-feature-text.ts: StoredFeature) without parsing it: property names and value kinds for a spool's columns, and a point's coordinates, for the writers with columns (FlatGeobuf).
// The texts are the hub's, written by JSON.stringify: compact, numbers in their shortest form, so a token's bytes are what stringifying its value gives.
import { BACKSLASH, CLOSE_BRACKET, COMMA, FALSE_START, NULL_START, OPEN_BRACE, OPEN_BRACKET, QUOTE, TRUE_START } from '../../core/json-bytes.js';
import { bytesAt, stringEnd } from '../../core/json-bytes-scan.js';
import type { ValueKind } from './column-kinds.js';

const GEOMETRY_START = Buffer.from('{"type":"');
const COORDINATES_KEY = Buffer.from(',"coordinates":');
const POINT_START = Buffer.from('{"type":"Point","coordinates":[');

/** Whether the bytes [start, end) hold a backslash: a JSON string without one is its own UTF-8 text. */
export function hasEscape(bytes: Buffer, start: number, end: number): boolean {
  for (let at = start; at < end; at++) if (bytes[at] === BACKSLASH) return true;
  return false;
}

/** A number token of at most 15 characters without a fraction or an exponent is a safe integer (2^53 has 16 digits). */
const MAX_PLAIN_LENGTH = 15;

/** The kind of the JSON value at [start, end) as spool.ts's kindOf gives for its parsed value; undefined for null. */
export function kindOfToken(bytes: Buffer, start: number, end: number): ValueKind | undefined {
  const first = bytes[start];
  if (first === QUOTE) return 'string';
  if (first === TRUE_START || first === FALSE_START) return 'boolean';
  if (first === NULL_START) return undefined;
  if (first === OPEN_BRACE || first === OPEN_BRACKET) return 'json';
  // A short number without fraction or exponent is an exact integer; otherwise the number itself tells: 1e+2 is whole,
  // and a whole number beyond 2^53 is a double, as spool.ts's kindOf types it.
  let plain = end - start <= MAX_PLAIN_LENGTH;
  for (let at = start; plain && at < end; at++) {
    const byte = bytes[at];
    if (byte === 0x2e || byte === 0x65 || byte === 0x45) plain = false;
  }
  return plain || Number.isSafeInteger(Number(bytes.toString('latin1', start, end))) ? 'integer' : 'number';
}

/**
 * Names of JSON string tokens (property keys, geometry types), decoded once per slot while they repeat: the features of
 * an export mostly have the same keys in the same places, and a byte comparison costs less than a new string.
 */
export class TokenNames {
  private readonly seen: Array<{ bytes: Buffer; name: string } | undefined> = [];

  /** The string of the JSON string token [start, end) (quotes included) at `slot`. */
  of(bytes: Buffer, start: number, end: number, slot: number): string {
    const last = this.seen[slot];
    if (last !== undefined && last.bytes.length === end - start && bytesAt(bytes, start, last.bytes)) return last.name;
    const token = bytes.subarray(start, end);
    const name = hasEscape(bytes, start, end) ? JSON.parse(token.toString('utf8')) as string : bytes.toString('utf8', start + 1, end - 1);
    this.seen[slot] = { bytes: Buffer.from(token), name };
    return name;
  }
}

/** The JSON string token of the type of the geometry object at `start`; undefined when the object does not start with its type. */
export function geometryTypeToken(bytes: Buffer, start: number): [number, number] | undefined {
  if (!bytesAt(bytes, start, GEOMETRY_START)) return undefined;
  const typeStart = start + GEOMETRY_START.length - 1;
  return [typeStart, stringEnd(bytes, typeStart)];
}

/**
 * Whether the first position of a geometry text has a third coordinate, as wkt.ts's hasZ says for the parsed geometry,
 * read after its type's token (`typeEnd`); undefined when `coordinates` does not follow the type (a GeometryCollection).
 */
export function firstPositionHasZ(bytes: Buffer, typeEnd: number): boolean | undefined {
  if (!bytesAt(bytes, typeEnd, COORDINATES_KEY)) return undefined;
  let at = typeEnd + COORDINATES_KEY.length;
  while (bytes[at] === OPEN_BRACKET) at++;
  let commas = 0;
  for (; at < bytes.length && bytes[at] !== CLOSE_BRACKET; at++) if (bytes[at] === COMMA) commas++;
  return commas >= 2;
}

/** Powers of ten that doubles hold exactly (10^22 is the last). */
const EXACT_POWERS = Array.from({ length: 23 }, (_, i) => 10 ** i);
/** Digits that make an integer below 2^53, whatever they are. */
const EXACT_DIGITS = 15;

/**
 * Number() of the number token [start, end), without a string for the common coordinate (`-12.345678`): up to 15 digits
 * make an integer m that a double holds exactly, 10^k is exact up to k = 22, and a division of two exact doubles is
 * correctly rounded, so m / 10^k is the double nearest the decimal, which is what Number() gives. Any other token
 * (an exponent, more digits) goes through Number().
 */
export function numberAt(bytes: Buffer, start: number, end: number): number {
  let at = start;
  const negative = bytes[at] === 0x2d;
  if (negative) at++;
  let whole = 0;
  let digits = 0;
  let fraction = -1;
  for (; at < end; at++) {
    const byte = bytes[at];
    if (byte >= 0x30 && byte <= 0x39) {
      whole = whole * 10 + (byte - 0x30);
      digits++;
      if (fraction >= 0) fraction++;
    } else if (byte === 0x2e && fraction < 0) {
      fraction = 0;
    } else {
      break;
    }
  }
  if (at !== end || digits === 0 || digits > EXACT_DIGITS || fraction === 0) return Number(bytes.toString('latin1', start, end));
  const value = fraction > 0 ? whole / EXACT_POWERS[fraction] : whole;
  return negative ? -value : value;
}

/** The coordinates of the geometry text [start, end) when it is a point of two or three numbers; undefined otherwise. */
export function pointCoordinates(bytes: Buffer, start: number, end: number): number[] | undefined {
  if (!bytesAt(bytes, start, POINT_START) || bytes[end - 2] !== CLOSE_BRACKET) return undefined;
  const coordinates: number[] = [];
  let from = start + POINT_START.length;
  for (let at = from; at <= end - 2; at++) {
    const byte = bytes[at];
    if (at < end - 2 && byte !== COMMA) {
      // Only a number's characters: anything else (a nested array, another member) is left to the parser.
      if (!((byte >= 0x30 && byte <= 0x39) || byte === 0x2d || byte === 0x2b || byte === 0x2e || byte === 0x65 || byte === 0x45)) return undefined;
      continue;
    }
    coordinates.push(numberAt(bytes, from, at));
    from = at + 1;
  }
  return coordinates.length === 2 || coordinates.length === 3 ? coordinates : undefined;
}
