// PostgreSQL text and jsonb cannot hold U+0000: what the engine stores and compares in its place.

/** U+FFFD, the replacement character, stands in for U+0000 in the indexed copies and in filter values. */
const STAND_IN = '\ufffd';

/** A `\u0000` escape, not preceded by an escaping backslash. */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

/**
 * jsonb rejects the NUL character, which JSON text may carry as `\u0000`. Such a feature is stored
 * and returned exactly as sent; only its indexed copy (for filters and statistics) has U+FFFD instead.
 */
export function jsonbStandIn(json: string): string | null {
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, `$1\\ufffd`) : null;
}

/** A filter value as the indexed copies hold it: every U+0000 in strings and object keys becomes U+FFFD. */
export function standIn<T>(value: T): T {
  if (typeof value === 'string') return value.replaceAll('\u0000', STAND_IN) as T;
  if (Array.isArray(value)) return value.map(standIn) as T;
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [standIn(key), standIn(member)])) as T;
  }
  return value;
}

/**
 * Ids and tags with U+0000 cannot be stored (the hub refuses them on write), so a lookup of one finds
 * nothing, without asking the database, which would reject the parameter.
 */
export const cannotExist = (id: string): boolean => id.includes('\u0000');
