// Random identifiers made of [A-Za-z0-9] only, which every client can put into a URL unencoded.
import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * Random bytes are drawn from the system a pool at a time: every request gets a stream id and many
 * written features an id, and one system call per id showed up as a tenth of a GET's CPU time.
 */
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let offset = 0;

function randomByte(): number {
  if (offset === POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    offset = 0;
  }
  return pool[offset++];
}

export function randomId(length: number): string {
  // 248 is the largest multiple of 62 below 256: rejecting bytes above it keeps every character equally likely.
  let id = '';
  while (id.length < length) {
    const byte = randomByte();
    if (byte < 248) id += ALPHABET[byte % 62];
  }
  return id;
}

/** Space ids are 8 characters (API.md 3.1), feature ids 16 (API.md 4.2), project ids 16 (our choice, docs/decisions.md). */
export const newSpaceId = (): string => randomId(8);
export const newFeatureId = (): string => randomId(16);
export const newProjectId = (): string => randomId(16);
