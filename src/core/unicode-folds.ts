// CQL2's CASEI and ACCENTI as character mappings, the one definition both engines and the filter compiler fold text with.
import { ACCENT_FOLDS, CASE_FOLDS } from './unicode-folds-data.js';

/** `case`: Unicode full case folding (CASEI); `accent`: accents and diacritics stripped (ACCENTI). */
export type TextFold = 'case' | 'accent';

export const FOLD_TABLES: Record<TextFold, ReadonlyArray<readonly [string, string]>> = { case: CASE_FOLDS, accent: ACCENT_FOLDS };

const maps: Record<TextFold, ReadonlyMap<string, string>> = { case: new Map(CASE_FOLDS), accent: new Map(ACCENT_FOLDS) };

/** The text with each character replaced by its mapping: no mapping's result has a mapping, so one pass is the fold. */
export function foldText(text: string, fold: TextFold): string {
  const map = maps[fold];
  let folded = '';
  for (const char of text) folded += map.get(char) ?? char;
  return folded;
}
