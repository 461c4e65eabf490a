// CQL2's CASEI and ACCENTI folds as PostgreSQL functions, made from the mapping tables the SQLite engine and the hub use.
import { FOLD_TABLES, type TextFold } from '../../core/unicode-folds.js';

/** The SQL function that folds text the `fold` way; its definition is part of a migration. */
export const FOLD_FUNCTIONS: Record<TextFold, string> = { case: 'hub_cql2_fold_case', accent: 'hub_cql2_fold_accent' };

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * One translate() for the mappings to at most one character (those to none last: translate drops them), then a replace()
 * for each mapping to several. No mapping's result has a mapping, so the order of the steps does not change the fold.
 */
export function foldFunctionSql(fold: TextFold): string {
  const table = FOLD_TABLES[fold];
  const single = table.filter(([, to]) => [...to].length === 1);
  const dropped = table.filter(([, to]) => to === '');
  const several = table.filter(([, to]) => [...to].length > 1);
  const from = [...single, ...dropped].map(([character]) => character).join('');
  let body = `translate(t, ${literal(from)}, ${literal(single.map(([, to]) => to).join(''))})`;
  for (const [character, to] of several) body = `replace(${body}, ${literal(character)}, ${literal(to)})`;
  return `CREATE FUNCTION ${FOLD_FUNCTIONS[fold]}(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fold$ SELECT ${body} $fold$;`;
}
