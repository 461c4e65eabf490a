// Hashing of passwords (scrypt), token strings and session ids (sha256), and constant-time checks of passwords.
import { randomBytes, scrypt, scryptSync, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { sha256Hex } from '../../core/sha256-hex.js';
import { randomId } from '../ids.js';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keyLength: number, options: object) => Promise<Buffer>;

const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 };

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, SCRYPT.keyLength, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/**
 * Whether `password` is the one `stored` was made from, compared in constant time. Off the event loop: a login
 * does not hold up the node's other requests. A stored value of another form (an unusable password) never matches.
 */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || key === undefined) {
    // The same work as for a real account, so that the answer time does not tell which usernames exist.
    await scryptAsync(password, randomBytes(16), SCRYPT.keyLength, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
    return false;
  }
  const expected = Buffer.from(key, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return timingSafeEqual(actual, expected);
}

/** Session cookies carry 256 random bits; the storage keeps only their sha256. */
export const newSessionId = (): string => randomBytes(32).toString('base64url');

/**
 * Tokens carry 40 random alphanumerics (about 238 bits), so a fast hash is enough to keep them secret at rest. Every
 * authenticated request hashes its token: a Hash object per request was most of the token check's cost
 * (docs/cache-and-changed-tiles.md, fourth look).
 */
export const hashToken = (token: string): string => sha256Hex(token);

export const newTokenString = (): string => randomId(40);
export const newPassword = (): string => randomId(20);

/** Token strings travel unencoded in query strings (API.md 1.9). */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~-]+$/;
