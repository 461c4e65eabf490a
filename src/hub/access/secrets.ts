// Hashing of passwords (scrypt) and token strings (sha256).
import { createHash, randomBytes, scryptSync } from 'node:crypto';
import { randomId } from '../ids.js';

const SCRYPT = { N: 16384, r: 8, p: 1, keyLength: 32 };

export function hashPassword(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, SCRYPT.keyLength, { N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p });
  return ['scrypt', SCRYPT.N, SCRYPT.r, SCRYPT.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** Tokens carry 40 random alphanumerics (about 238 bits), so a fast hash is enough to keep them secret at rest. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export const newTokenString = (): string => randomId(40);
export const newPassword = (): string => randomId(20);

/** Token strings travel unencoded in query strings (API.md 1.9). */
export const TOKEN_PATTERN = /^[A-Za-z0-9._~-]+$/;
