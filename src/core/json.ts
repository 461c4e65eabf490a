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
