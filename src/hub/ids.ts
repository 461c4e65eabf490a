// Random identifiers made of [A-Za-z0-9] only, which every client can put into a URL unencoded.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomId(length: number): string {
  // 248 is the largest multiple of 62 below 256: rejecting bytes above it keeps every character equally likely.
  let id = '';
  while (id.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && id.length < length) id += ALPHABET[byte % 62];
    }
  }
  return id;
}

/** Space ids are 8 characters (API.md 3.1), feature ids 16 (API.md 4.2). */
export const newSpaceId = (): string => randomId(8);
export const newFeatureId = (): string => randomId(16);
