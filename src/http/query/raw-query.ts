// Reads query parameters from the undecoded query string, because the comma rule (API.md 1.2) and the `tags` `+` rule (5.4) depend on what was encoded.
import { hubError } from '../../core/errors.js';
import { normalizeTagList } from '../../hub/tags.js';
import type { TagExpression } from '../../core/feature-query.js';

export const DEFAULT_LIMIT = 30000;
export const MAX_LIMIT = 100000;

/**
 * The most values one list parameter (`id`, `tags` members, `selection`, …) or all property filters
 * together may hold. SQLite compiles each value into the expression tree of one statement, which
 * refuses more than 1,000 levels; see docs/decisions.md.
 */
export const MAX_LIST_VALUES = 500;

/** Throws the documented 400 when a list parameter holds more than MAX_LIST_VALUES values. */
export function checkListLength(name: string, count: number): void {
  if (count > MAX_LIST_VALUES) throw hubError('tooManyValues', { name, count, limit: MAX_LIST_VALUES });
}

/** One non-empty `name=value` piece of the query string. */
interface Segment {
  /** The segment exactly as sent. */
  readonly raw: string;
  /**
   * The lower-cased, undecoded name: named parameters are plain ASCII words that clients never
   * percent-encode, and lookups are case-insensitive (API.md 1.1).
   */
  readonly key: string;
  /** The undecoded value; `''` when the segment has no `=`. */
  readonly rawValue: string;
}

/** Percent-decoding only (`+` stays `+`); undefined when the encoding is malformed. */
export function percentDecode(text: string): string | undefined {
  if (!text.includes('%')) return text;
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

/** Form decoding (`+` is a space, then percent-decoding); undefined when the encoding is malformed. */
export function formDecode(text: string): string | undefined {
  return percentDecode(text.replaceAll('+', ' '));
}

/** Only unencoded commas separate values; `%2C` stays inside its value until decoded (API.md 1.2). */
export function splitRawList(rawValue: string): string[] {
  return rawValue.split(',');
}

export class RawQuery {
  private readonly segments: readonly Segment[];

  /** From a request URL such as `/hub/spaces/x/search?tags=a`; no `?` means no parameters. */
  static fromUrl(url: string, declared?: ReadonlySet<string>): RawQuery {
    const start = url.indexOf('?');
    return new RawQuery(start < 0 ? '' : url.slice(start + 1), declared);
  }

  /**
   * `rawQueryString` is the undecoded text after `?`. Empty segments (`&&`) are ignored (API.md 1.9). `declared`:
   * the lower-cased names the route declares (`p.*` for a family, `*` for any); reading another is a programming
   * error, so the API document generated from the route table lists every parameter a route reads.
   */
  constructor(rawQueryString: string, private readonly declared?: ReadonlySet<string>) {
    this.segments = rawQueryString.split('&').filter((raw) => raw !== '').map(parseSegment);
  }

  private checkDeclared(name: string): void {
    const key = name.toLowerCase();
    if (this.declared === undefined || this.declared.has(key) || this.declared.has('*')) return;
    throw new Error(`The route reads the query parameter "${name}" without declaring it in the route table`);
  }

  /** The whole value of the first occurrence, form-decoded, without comma splitting. */
  first(name: string): string | undefined {
    const segment = this.matching(name)[0];
    return segment === undefined ? undefined : decodeParameter(name, segment.rawValue);
  }

  /** The whole value of each occurrence, form-decoded, without comma splitting: for parameters that must come once. */
  occurrences(name: string): string[] {
    return this.matching(name).map((segment) => decodeParameter(name, segment.rawValue));
  }

  /** An integer parameter within bounds; anything else is a 400 naming the parameter and what it takes. */
  integer(name: string, fallback: number, min: number, max: number): number {
    const value = this.first(name);
    if (value === undefined || value === '') return fallback;
    const parsed = parseInteger(value);
    if (parsed === undefined || parsed < min || parsed > max) {
      throw hubError('invalidParameter', { name, problem: `expected an integer from ${min} to ${max}, got "${value.slice(0, 40)}"` });
    }
    return parsed;
  }

  /** One of the listed words (case-insensitive); anything else is a 400 listing them. */
  choice<T extends string>(name: string, allowed: readonly T[], fallback: T): T {
    const value = this.first(name);
    if (value === undefined || value === '') return fallback;
    const found = allowed.find((word) => word.toLowerCase() === value.toLowerCase());
    if (found === undefined) throw hubError('invalidParameter', { name, problem: `expected one of ${allowed.join(', ')}, got "${value.slice(0, 40)}"` });
    return found;
  }

  /** Every value of every occurrence: split on unencoded commas, then form-decoded (`?x=` gives `['']`). */
  values(name: string): string[] {
    const raw = this.matching(name).flatMap((segment) => splitRawList(segment.rawValue));
    checkListLength(name, raw.length);
    return raw.map((part) => decodeParameter(name, part));
  }

  /** Only the exact values `true` and `false` count; anything else means the default (API.md 1.2). */
  boolean(name: string, fallback: boolean): boolean {
    const value = this.first(name);
    if (value === 'true') return true;
    if (value === 'false') return false;
    return fallback;
  }

  /** `limit` per API.md 1.8: any value that is not an integer in 1..100000 gets the fixed message. */
  limit(defaultLimit: number = DEFAULT_LIMIT): number {
    const value = this.first('limit');
    if (value === undefined) return defaultLimit;
    const parsed = parseInteger(value);
    if (parsed === undefined || parsed < 1 || parsed > MAX_LIMIT) throw hubError('limitOutOfRange');
    return parsed;
  }

  /**
   * The `tags` filter (API.md 5.4): unencoded `,` and repeated parameters are OR, raw `+` is AND,
   * members are decoded (so `%2B` is a literal `+`) and normalized. `[]` means no filter.
   */
  tags(): TagExpression {
    const groups = this.matching('tags')
      .flatMap((segment) => splitRawList(segment.rawValue))
      .map((group) => group.split('+'));
    checkListLength('tags', groups.reduce((sum, group) => sum + group.length, 0));
    return groups
      // After the split on raw `+` no `+` is left, so form decoding is plain percent-decoding here.
      .map((group) => normalizeTagList(group.map((member) => decodeParameter('tags', member))))
      .filter((group) => group.length > 0);
  }

  /**
   * `tags=*` on DELETE means every feature (API.md 4.8). True when any `tags` parameter is exactly
   * `*`: OR-ing "everything" with other groups is still everything. Other endpoints ignore this.
   */
  isDeleteAll(): boolean {
    return this.matching('tags').some((segment) => percentDecode(segment.rawValue) === '*');
  }

  /** Raw segments starting with `p.` or `f.` (case-sensitive, API.md 1.1), in request order. */
  propertyFilterSegments(): string[] {
    this.checkDeclared('p.*');
    return this.segments
      .filter((segment) => segment.raw.startsWith('p.') || segment.raw.startsWith('f.'))
      .map((segment) => segment.raw);
  }

  /** Raw segments whose text starts with `prefix`, for parameters that carry their own operator (`name>=value`). */
  rawSegmentsStartingWith(prefix: string, ignoreCase = false): string[] {
    this.checkDeclared(prefix.endsWith('.') ? `${prefix}*` : prefix);
    const wanted = ignoreCase ? prefix.toLowerCase() : prefix;
    return this.segments
      .filter((segment) => (ignoreCase ? segment.raw.toLowerCase() : segment.raw).startsWith(wanted))
      .map((segment) => segment.raw);
  }

  private matching(name: string): Segment[] {
    this.checkDeclared(name);
    const key = name.toLowerCase();
    return this.segments.filter((segment) => segment.key === key);
  }
}

function parseSegment(raw: string): Segment {
  const equals = raw.indexOf('=');
  const name = equals < 0 ? raw : raw.slice(0, equals);
  return { raw, key: name.toLowerCase(), rawValue: equals < 0 ? '' : raw.slice(equals + 1) };
}

/** Credentials are never echoed, not even malformed ones. */
const SECRET_PARAMETERS = new Set(['access_token']);

function decodeParameter(name: string, text: string): string {
  const decoded = formDecode(text);
  if (decoded === undefined) {
    const shown = SECRET_PARAMETERS.has(name.toLowerCase()) ? 'its value' : `"${text}"`;
    throw hubError('invalidParameter', { name, problem: `malformed percent-encoding in ${shown}` });
  }
  return decoded;
}

/** Decimal digits with an optional sign; undefined for anything else (`1.0`, `1e3`, `''`). */
function parseInteger(text: string): number | undefined {
  return /^[+-]?\d+$/.test(text) ? Number(text) : undefined;
}
