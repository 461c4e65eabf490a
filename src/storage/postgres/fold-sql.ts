// CQL2's CASEI and ACCENTI folds as PostgreSQL functions, made from the mapping tables the SQLite engine and the hub use.
import { FOLD_TABLES, type TextFold } from '../../core/unicode-folds.js';

/** The SQL function that folds text the `fold` way; its definition is part of a migration. */
export const FOLD_FUNCTIONS: Record<TextFold, string> = { case: 'hub_cql2_fold_case', accent: 'hub_cql2_fold_accent' };

const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * One translate() for the mappings to at most one character (those to none last: translate drops them), then a replace()
 * for each mapping to several. No mapping's result has a mapping, so the order of the steps does not change the fold.
 */
function foldBody(table: ReadonlyArray<readonly [string, string]>): string {
  const single = table.filter(([, to]) => [...to].length === 1);
  const dropped = table.filter(([, to]) => to === '');
  const several = table.filter(([, to]) => [...to].length > 1);
  const from = [...single, ...dropped].map(([character]) => character).join('');
  let body = from === '' ? 't' : `translate(t, ${literal(from)}, ${literal(single.map(([, to]) => to).join(''))})`;
  for (const [character, to] of several) body = `replace(${body}, ${literal(character)}, ${literal(to)})`;
  return body;
}

/** The table's mappings of ASCII characters (A–Z for CASEI, none for ACCENTI) as SQL; A–Z alone is lower() in the C collation, which maps nothing else. */
function asciiBody(table: ReadonlyArray<readonly [string, string]>): string {
  const ascii = table.filter(([character]) => character.charCodeAt(0) < 0x80);
  const lettersOnly = ascii.length === 26 && ascii.every(([from, to]) => /^[A-Z]$/u.test(from) && to === from.toLowerCase());
  return lettersOnly ? 'lower(t COLLATE "C")' : foldBody(ascii);
}

/**
 * translate() looks each character up in its list one by one: with the whole table that costs 100 to 200 µs for a short
 * string (half that for ACCENTI), so a text of ASCII characters alone (as many bytes as characters) takes only the
 * table's ASCII mappings, the same fold at about the cost of lower() (docs/ogc-filtering.md, "CASEI and ACCENTI").
 */
export function foldFunctionSql(fold: TextFold): string {
  const table = FOLD_TABLES[fold];
  const ascii = asciiBody(table);
  const body = `CASE WHEN octet_length(t) = char_length(t) THEN ${ascii} ELSE ${foldBody(table)} END`;
  return `CREATE FUNCTION ${FOLD_FUNCTIONS[fold]}(t text) RETURNS text LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $fold$ SELECT ${body} $fold$;`;
}
