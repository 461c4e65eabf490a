// The keyset condition and ORDER BY of a sorted read (core/feature-query.ts SortValue), the same SQL on both engines.
import type { SortKey, SortValue } from '../../core/feature-query.js';

/** The three columns a sort key is computed into, by position: `k<i>r`, `k<i>n`, `k<i>s`. */
export const keyColumns = (index: number): string[] => [`k${index}r`, `k${index}n`, `k${index}s`];

/** `k0r ASC, k0n ASC, k0s ASC, k1r DESC, …`. */
export function sortOrder(sort: readonly SortKey[]): string {
  return sort.flatMap((key, index) => keyColumns(index).map((column) => `${column} ${key.descending ? 'DESC' : 'ASC'}`)).join(', ');
}

/**
 * The rows after `after` in the order: those equal on the first keys and past it on the next, for each key. Each key's
 * three columns compare as one row value, which SQLite and PostgreSQL both order column by column. `placeholder` binds
 * one value and returns its SQL.
 */
export function afterCondition(sort: readonly SortKey[], after: readonly SortValue[], placeholder: (value: unknown, kind: 'integer' | 'number' | 'text') => string): string {
  const row = (index: number) => `(${keyColumns(index).join(', ')})`;
  const values = (index: number) => {
    const [rank, number, text] = after[index];
    return `(${placeholder(rank, 'integer')}, ${placeholder(number, 'number')}, ${placeholder(text, 'text')})`;
  };
  const alternatives = sort.map((key, index) => {
    const equal = sort.slice(0, index).map((_, before) => `${row(before)} = ${values(before)}`);
    return [...equal, `${row(index)} ${key.descending ? '<' : '>'} ${values(index)}`].join(' AND ');
  });
  return `((${alternatives.join(') OR (')}))`;
}
