// CQL2 arithmetic, CASEI and ACCENTI as SQLite functions, with the semantics the PostgreSQL engine's hub_cql2_arithmetic has (docs/ogc-filtering.md).
import { foldText } from '../../core/unicode-folds.js';

/** One IEEE double operation; a result that is not a finite number is null (SQL NULL). `^` is SQLite's pow (C's, as PostgreSQL's). */
function step(op: string, a: number, b: number): number | null {
  const value = op === '+' ? a + b : op === '-' ? a - b : op === '*' ? a * b : b === 0 ? Number.NaN : a / b;
  return Number.isFinite(value) ? value : null;
}

/** `hub_cql2_arithmetic(op, a, b)`: `+ - * /`, `div` (the quotient truncated toward zero) and `%` (`a - b * (a div b)`). */
export function cql2Arithmetic(op: unknown, a: unknown, b: unknown): number | null {
  if (typeof op !== 'string' || typeof a !== 'number' || typeof b !== 'number') return null;
  if (op !== 'div' && op !== '%') return step(op, a, b);
  const quotient = step('/', a, b);
  if (quotient === null) return null;
  if (op === 'div') return Math.trunc(quotient);
  const product = step('*', b, Math.trunc(quotient));
  return product === null ? null : step('-', a, product);
}

/** `hub_cql2_finite(x)`: x when it is a finite number (SQLite's pow gives infinities), else null. */
export function cql2Finite(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

/** `hub_cql2_fold(fold, text)`: the text folded by CASEI (`case`) or ACCENTI (`accent`); null for anything else. */
export function cql2Fold(fold: unknown, text: unknown): string | null {
  return typeof text === 'string' && (fold === 'case' || fold === 'accent') ? foldText(text, fold) : null;
}
