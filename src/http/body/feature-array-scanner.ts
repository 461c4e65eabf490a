// Splits a large FeatureCollection body into its features as the bytes arrive, parsing each with JSON.parse.
import { isObject } from '../../core/json.js';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from '../../core/json-bytes.js';
import { hubError } from '../../core/errors.js';
import { MAX_BODY_DEPTH, MAX_JSON_DEPTH } from '../../core/json-limits.js';

/*
 * Why not stream-json: on a 50 MB upload its token stream parsed about 10,000 features/s with heavy
 * garbage collection, while JSON.parse handles over 100,000/s. This scanner only finds where each
 * element of the root `features` array begins and ends (tracking strings, escapes and nesting) and
 * gives every element to JSON.parse on its own, so the body is never held whole and parsing stays native.
 *
 * The same body must get the same answer as JSON.parse gives it below the streaming threshold: the
 * text outside the features array goes through JSON.parse too (with the array as `[]`), each element
 * does, and the scanner itself checks what neither sees, the commas between elements. As JSON.parse
 * does, the last of several `features` members wins.
 */

/** Root member names are kept up to this many bytes: `features` written with escapes (`\u0066…`) takes 48. */
const MAX_KEY_LENGTH = 64;

const isWhitespace = (byte: number): boolean => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** A root member name as JSON.parse reads it; escapes are decoded, a name too long to be `features` is ''. */
function decodeKey(raw: string): string {
  if (raw.length > MAX_KEY_LENGTH) return '';
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return '';
  }
}

export class FeatureArrayScanner {
  private readonly rootParts: Buffer[] = [];
  private readonly elementParts: Buffer[] = [];
  private features: unknown[] = [];
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** The raw text of the last string seen directly in the root object, and the key it became at its colon. */
  private lastString = '';
  private key = '';
  private inFeatures = false;
  private inElement = false;
  /** A comma was seen in the features array and its element has not begun yet. */
  private afterComma = false;
  private streamedArrays = 0;

  constructor(private readonly maxDepth: number = MAX_BODY_DEPTH) {}

  write(chunk: Buffer): void {
    let rootStart = this.inFeatures ? -1 : 0;
    let elementStart = this.inElement ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) {
          this.inString = false;
          continue;
        }
        if (this.depth === 1 && this.lastString.length <= MAX_KEY_LENGTH) this.lastString += String.fromCharCode(byte);
        continue;
      }
      if (this.inFeatures && this.depth === 2) {
        if (byte === COMMA || byte === CLOSE_BRACKET) {
          if (this.inElement) {
            this.elementParts.push(chunk.subarray(elementStart, i));
            this.finishElement();
            elementStart = -1;
          } else if (byte === COMMA || this.afterComma) {
            throw this.separatorError(byte);
          }
          this.afterComma = byte === COMMA;
          if (byte === CLOSE_BRACKET) {
            this.depth = 1;
            this.inFeatures = false;
            rootStart = i;
          }
          continue;
        }
        if (!this.inElement && !isWhitespace(byte)) {
          this.inElement = true;
          this.afterComma = false;
          elementStart = i;
        }
      }
      if (byte === QUOTE) {
        this.inString = true;
        if (this.depth === 1) this.lastString = '';
      } else if (byte === COLON && this.depth === 1) {
        this.key = decodeKey(this.lastString);
      } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
        this.depth++;
        if (this.depth > this.maxDepth) {
          const where = this.inFeatures ? `features[${this.features.length}]` : 'the root object';
          throw hubError('jsonTooDeep', { what: 'request body', where, limit: MAX_JSON_DEPTH });
        }
        if (byte === OPEN_BRACKET && this.depth === 2 && this.key === 'features' && !this.inFeatures && rootStart >= 0) {
          this.rootParts.push(chunk.subarray(rootStart, i + 1));
          rootStart = -1;
          this.startFeatures();
        }
      } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
        this.depth--;
      }
    }
    if (rootStart >= 0) this.rootParts.push(chunk.subarray(rootStart));
    if (this.inElement && elementStart >= 0) this.elementParts.push(chunk.subarray(elementStart));
  }

  /** A later `features` member replaces an earlier one, as in JSON.parse. */
  private startFeatures(): void {
    this.inFeatures = true;
    this.afterComma = false;
    this.features = [];
    this.streamedArrays++;
  }

  private separatorError(byte: number): Error {
    const found = byte === COMMA ? 'a comma' : 'the closing bracket';
    return hubError('invalidJsonFeatures', { detail: `Unexpected ${found} where features[${this.features.length}] should begin` });
  }

  private finishElement(): void {
    const text = Buffer.concat(this.elementParts).toString('utf8');
    this.elementParts.length = 0;
    this.inElement = false;
    try {
      this.features.push(JSON.parse(text));
    } catch (error) {
      throw hubError('invalidJsonFeatures', { detail: `${(error as Error).message} (in features[${this.features.length}])` });
    }
  }

  /** The root value with its `features` array filled; throws the documented 400 on malformed JSON. */
  end(): unknown {
    let root: unknown;
    try {
      root = JSON.parse(Buffer.concat(this.rootParts).toString('utf8'));
    } catch (error) {
      throw hubError('invalidJsonFeatures', { detail: (error as Error).message });
    }
    // The root text holds every streamed array as `[]`; the member JSON.parse kept is the last one streamed.
    if (this.streamedArrays > 0 && isObject(root) && Array.isArray(root.features)) {
      root.features = this.features;
    }
    return root;
  }
}
