// Reads CQL2's CASEI and ACCENTI (case- and accent-insensitive comparison): which property or literal they fold, and how.
import { hubError } from '../../../core/errors.js';
import { foldText, type TextFold } from '../../../core/unicode-folds.js';

const FOLDS: Record<string, TextFold> = { casei: 'case', accenti: 'accent' };

/** A string property or literal with the folds applied to it, innermost first; a literal comes folded already. */
export type FoldedOperand = { path: string[]; folds: TextFold[] } | { literal: string };

const invalid = (problem: string) => hubError('ogcInvalidFilter', { problem });
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

export const isFold = (value: unknown): boolean => isObject(value) && typeof value.op === 'string' && Object.hasOwn(FOLDS, value.op);

/** `CASEI(…)`, `ACCENTI(…)`, nested in any order, of a string property or a string literal; `propertyPath` resolves the property. */
export function foldedOperand(value: unknown, propertyPath: (reference: unknown) => string[], folds: TextFold[] = []): FoldedOperand {
  if (isObject(value) && typeof value.op === 'string' && Object.hasOwn(FOLDS, value.op)) {
    const args = Array.isArray(value.args) ? value.args : [];
    if (args.length !== 1) throw invalid(`${value.op.toUpperCase()} takes 1 argument, got ${args.length}`);
    return foldedOperand(args[0], propertyPath, [FOLDS[value.op], ...folds]);
  }
  if (typeof value === 'string') return { literal: folds.reduce(foldText, value) };
  if (isObject(value) && typeof value.property === 'string') return { path: propertyPath(value), folds };
  throw invalid('CASEI and ACCENTI take a string or a string property');
}
