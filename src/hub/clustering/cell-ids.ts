// Stable identifiers: 15-character ids of output cells and the feature hash that drives sampling.
import { createHash } from 'node:crypto';

/** 15 hex digits of the MD5 of `key` (hexbin cell ids, as in the API.md example). */
export function hexCellId(key: string): string {
  return createHash('md5').update(key).digest('hex').slice(0, 15);
}

/** 15 decimal digits derived from the MD5 of `key` (quadbin cell ids, as in the API.md example). */
export function decimalCellId(key: string): string {
  const digest = BigInt(`0x${createHash('md5').update(key).digest('hex').slice(0, 16)}`);
  return (digest % 10n ** 15n).toString().padStart(15, '0');
}

/**
 * FNV-1a over the UTF-16 code units of a feature id, finished with the MurmurHash3 mixer so the
 * low bits (which sampling takes modulo a power of two) are as well spread as the high ones.
 */
export function featureHash(featureId: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < featureId.length; index++) {
    hash ^= featureId.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}
