// Small helpers for untyped JSON values that every layer reads: the object test and the byte-order mark.

/** A JSON object: not null, not an array. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** The bytes without a leading UTF-8 byte-order mark (API.md 1.9: a GeoJSON file may start with one). */
export function withoutBom(bytes: Buffer): Buffer {
  return bytes.subarray(0, 3).equals(BOM) ? bytes.subarray(3) : bytes;
}

/**
 * `table[key]` for a key the client chose, only when the table holds it itself: a plain lookup of `__proto__`,
 * `constructor` or `toString` reaches Object.prototype, and what it finds there is taken for a known entry.
 */
export function ownMember<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
