// The sha256 of a text as hex, with Node's one-shot hash where it has one: paths that hash on every request (tokens, answer keys) make no Hash object.
import * as crypto from 'node:crypto';

/** `crypto.hash` (Node 20.12 on) where present, else a Hash object: the package allows earlier Node 20 releases. */
export const sha256Hex: (text: string) => string = typeof crypto.hash === 'function'
  ? (text) => crypto.hash('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');
