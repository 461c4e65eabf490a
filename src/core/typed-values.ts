// The typing of query values that property filters and clustering options share (API.md 5.5): booleans, numbers, quoted strings, `.null`.
import type { JsonScalar } from './feature-query.js';

/** A decimal number as a query string writes it: no hex, no `Infinity`, no empty string. */
export const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** Per-value typing of API.md 5.5: boolean, number, quoted string, `.null`, else the string as is. */
export function typeScalar(text: string): JsonScalar {
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (DECIMAL.test(text)) {
    const number = Number(text);
    if (Number.isFinite(number)) return number;
  }
  return typeText(text);
}

/** Values compared as text keep numbers and booleans as written; only quotes and `.null` are special. */
export function typeText(text: string): string | null {
  if (text === '.null') return null;
  const quote = text[0];
  if (text.length > 2 && (quote === '"' || quote === "'") && text.endsWith(quote)) return text.slice(1, -1);
  return text;
}
