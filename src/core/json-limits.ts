// Limits on the JSON the hub accepts (nesting depth, well-formed Unicode) and the checks that enforce them at any depth.
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-bytes.js';
import { hubError } from './errors.js';

/**
 * The deepest nesting of a stored feature or space definition, the object itself being level 1
 * (a MultiPolygon feature is 6 deep). Far below SQLite's JSON depth limit (1,000) and what
 * JSON.stringify and PostgreSQL's JSON parser handle on their stacks; see docs/decisions.md.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * A request body may nest deeper than its features by its wrappers: a modification list holds its
 * features 5 levels down (`{"modifications":[{"featureData":{"features":[…]}}]}`).
 */
export const MAX_BODY_DEPTH = MAX_JSON_DEPTH + 5;

/** Without a lone UTF-16 surrogate (paired ones form one code point). */
const isWellFormedText = (text: string): boolean => text.isWellFormed();

/** Longer member names are shortened in messages. */
const MAX_SHOWN_KEY = 40;

/** Where the outermost two levels of a JSON text stand: a member name or an array index per level. */
class TextLocation {
  private readonly isArray: boolean[] = [false, false];
  private readonly index: number[] = [0, 0];
  private readonly key: string[] = ['', ''];
  private lastString = '';

  open(depth: number, isArray: boolean): void {
    if (depth > 2) return;
    this.isArray[depth - 1] = isArray;
    this.index[depth - 1] = 0;
    this.key[depth - 1] = '';
  }

  comma(depth: number): void {
    if (depth <= 2) this.index[depth - 1]++;
  }

  colon(depth: number): void {
    if (depth <= 2) this.key[depth - 1] = this.lastString;
  }

  startString(): void {
    this.lastString = '';
  }

  stringByte(byte: number): void {
    if (this.lastString.length <= MAX_SHOWN_KEY) this.lastString += String.fromCharCode(byte);
  }

  /** `features[3]`, `modifications[0].featureData`, `[2]`: the outermost levels down to `depth`. */
  describe(depth: number): string {
    let where = '';
    for (let level = 0; level < Math.min(depth, 2); level++) {
      if (this.isArray[level]) where += `[${this.index[level]}]`;
      else where += `${where === '' ? '' : '.'}${this.key[level].slice(0, MAX_SHOWN_KEY)}`;
    }
    return where;
  }
}

const LOWER_U = 0x75;
const UPPER_D = 0x44;
const LOWER_D = 0x64;

/**
 * Whether the 4 hex digits of a `\u` escape at `at` name a UTF-16 surrogate (D800-DFFF), paired or not: only such an
 * escape can put a lone surrogate into parsed JSON, since decoding UTF-8 never yields one.
 */
function isSurrogateEscape(bytes: Uint8Array, at: number): boolean {
  const first = bytes[at];
  if (first !== UPPER_D && first !== LOWER_D) return false;
  const second = bytes[at + 1] | 0x20;
  return (second >= 0x38 && second <= 0x39) || (second >= 0x61 && second <= 0x66);
}

/** What one scan of JSON text found: the deepest level reached (stopped at `maxDepth` + 1), and any surrogate escape. */
interface TextScan {
  depth: number;
  surrogateEscape: boolean;
}

/**
 * How deep JSON text nests, up to `maxDepth` + 1, and whether it holds a surrogate escape: `findTooDeepText` without
 * the location, which only a refusal needs. Every write body is scanned so before it is parsed, and the location's
 * bookkeeping made the scan about 2.5 ms per 1,000 cities; this loop takes a fraction of that (docs/decisions.md,
 * "PostgreSQL ingest", fourth round).
 */
function scanNesting(bytes: Uint8Array, maxDepth: number): TextScan {
  let depth = 0;
  let deepest = 0;
  let surrogateEscape = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      for (i++; i < bytes.length; i++) {
        const inString = bytes[i];
        if (inString === QUOTE) break;
        if (inString === BACKSLASH) {
          i++;
          if (bytes[i] === LOWER_U && !surrogateEscape) surrogateEscape = isSurrogateEscape(bytes, i + 1);
        }
      }
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > deepest) {
        deepest = depth;
        if (depth > maxDepth) break;
      }
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return { depth: deepest, surrogateEscape };
}

/**
 * Finds nesting deeper than `maxDepth` in JSON text before any parser sees it (JSON.parse copes, but
 * the values it builds would overflow JSON.stringify's stack). Does not validate the JSON. Returns
 * where the outermost levels stood (e.g. `features[3]`), or undefined when the nesting is within bounds.
 */
export function findTooDeepText(bytes: Uint8Array, maxDepth: number): string | undefined {
  return scanNesting(bytes, maxDepth).depth <= maxDepth ? undefined : locateTooDeep(bytes, maxDepth);
}

/** Where text that `scanNesting` found too deep first passes `maxDepth`: the outermost levels, as the message names them. */
function locateTooDeep(bytes: Uint8Array, maxDepth: number): string {
  const location = new TextLocation();
  let depth = 0;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (byte === BACKSLASH) escaped = true;
      else if (byte === QUOTE) {
        inString = false;
        continue;
      }
      if (depth <= 2) location.stringByte(byte);
      continue;
    }
    if (byte === QUOTE) {
      inString = true;
      location.startString();
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth++;
      if (depth > maxDepth) return location.describe(depth - 1) || 'the root';
      location.open(depth, byte === OPEN_BRACKET);
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    } else if (byte === COMMA) {
      location.comma(depth);
    } else if (byte === COLON) {
      location.colon(depth);
    }
  }
  // Not reached: called only for text whose scan went past maxDepth.
  return 'the root';
}

export interface JsonValueProblem {
  kind: 'depth' | 'unicode';
  /** A readable path from the checked value, such as `properties.name` or `geometry.coordinates[0]`. */
  path: string;
}

interface Visit {
  value: unknown;
  depth: number;
  step: string;
  parent: Visit | undefined;
}

/** Paths are shown up to this many steps; a deeper one ends in `…`. */
const MAX_SHOWN_STEPS = 8;

function pathOf(visit: Visit): string {
  const steps: string[] = [];
  for (let at: Visit | undefined = visit; at?.parent !== undefined; at = at.parent) steps.push(at.step);
  steps.reverse();
  const shown = steps.slice(0, MAX_SHOWN_STEPS).join('').replace(/^\./, '');
  return steps.length > MAX_SHOWN_STEPS ? `${shown}…` : shown || '(root)';
}

function step(key: string): string {
  const shown = isWellFormedText(key) ? key : key.replace(/\p{Cs}/gu, '\uFFFD');
  return `.${shown.length > MAX_SHOWN_KEY ? `${shown.slice(0, MAX_SHOWN_KEY)}…` : shown}`;
}

/**
 * Whether a value at `depth` (1 for the checked value) and everything in it nest at most `maxDepth` deep and hold
 * well-formed text only: `findJsonValueProblem` without the path, which only a refusal needs, and without its
 * bookkeeping (a record per container), which every feature of a write paid for. The recursion stops at the bound,
 * so it is as safe as the explicit stack at any depth.
 */
function isWithinLimits(value: unknown, depth: number, maxDepth: number): boolean {
  if (typeof value === 'string') return isWellFormedText(value);
  if (typeof value !== 'object' || value === null) return true;
  if (depth > maxDepth) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) if (!isWithinLimits(value[index], depth + 1, maxDepth)) return false;
    return true;
  }
  const members = value as Record<string, unknown>;
  for (const key of Object.keys(members)) {
    if (!isWellFormedText(key) || !isWithinLimits(members[key], depth + 1, maxDepth)) return false;
  }
  return true;
}

/**
 * The first value nested deeper than `maxDepth` (the value itself is level 1 when it is an object or
 * array) or the first string or member name holding a lone surrogate, which PostgreSQL's JSON cannot
 * store. Walks with an explicit stack, so any depth is safe; only containers are pushed.
 */
export function findJsonValueProblem(value: unknown, maxDepth: number): JsonValueProblem | undefined {
  if (isWithinLimits(value, 1, maxDepth)) return undefined;
  if (typeof value === 'string') return isWellFormedText(value) ? undefined : { kind: 'unicode', path: '(root)' };
  if (typeof value !== 'object' || value === null) return undefined;
  const stack: Visit[] = [{ value, depth: 1, step: '', parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    if (visit.depth > maxDepth) return { kind: 'depth', path: pathOf(visit) };
    const container = visit.value as Record<string, unknown> | unknown[];
    const isArray = Array.isArray(container);
    const keys = isArray ? undefined : Object.keys(container);
    const length = isArray ? container.length : (keys as string[]).length;
    for (let index = length - 1; index >= 0; index--) {
      const key = isArray ? undefined : (keys as string[])[index];
      const child = key === undefined ? (container as unknown[])[index] : (container as Record<string, unknown>)[key];
      const isContainer = typeof child === 'object' && child !== null;
      const badKey = key !== undefined && !isWellFormedText(key);
      if (!isContainer && !badKey && (typeof child !== 'string' || isWellFormedText(child))) continue;
      const childVisit: Visit = { value: child, depth: visit.depth + 1, step: key === undefined ? `[${index}]` : step(key), parent: visit };
      if (!isContainer || badKey) return { kind: 'unicode', path: pathOf(childVisit) };
      stack.push(childVisit);
    }
  }
  return undefined;
}

/**
 * Throws the documented 400 when `bytes` nest deeper than `maxDepth` (the feature limit plus the
 * body's wrappers); `what` names the input ("request body"), the message states the feature limit.
 * Returns whether the text alone shows that every value parsed from it passes `checkJsonValue`: it
 * nests at most MAX_JSON_DEPTH deep and has no surrogate escape. Then the walk of each parsed feature
 * can be skipped, which allocated a list of member names per object of every write (seventh round).
 */
export function checkJsonText(bytes: Uint8Array, what: string, maxDepth: number): boolean {
  const scan = scanNesting(bytes, maxDepth);
  if (scan.depth > maxDepth) throw hubError('jsonTooDeep', { what, where: locateTooDeep(bytes, maxDepth), limit: MAX_JSON_DEPTH });
  return scan.depth <= MAX_JSON_DEPTH && !scan.surrogateEscape;
}

/** Throws the documented 400 for a value nested too deep or holding a lone surrogate; `what` names it ("feature at position 3"). */
export function checkJsonValue(value: unknown, what: string): void {
  const problem = findJsonValueProblem(value, MAX_JSON_DEPTH);
  if (problem === undefined) return;
  if (problem.kind === 'depth') throw hubError('jsonTooDeep', { what, where: problem.path, limit: MAX_JSON_DEPTH });
  throw hubError('malformedUnicode', { what, where: problem.path });
}
