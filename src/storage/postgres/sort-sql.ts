// The sort keys of a sorted read in PostgreSQL: each key's JSON type rank, number and string (core/feature-query.ts SortValue).
import type { SortKey } from '../../core/feature-query.js';
import { keyColumns } from '../shared/sort-keyset.js';
import { jsonAt, type SqlParams } from './filter-sql.js';

/**
 * The columns `k<i>r, k<i>n, k<i>s` of each key over the rows `f`. Numbers compare as float8, the doubles SQLite
 * compares, and strings in the C collation, the byte order of UTF-8 that SQLite's BINARY has.
 */
export function sortColumns(sort: readonly SortKey[], params: SqlParams): string {
  return sort.flatMap((key, index) => {
    const [rank, number, text] = keyColumns(index);
    if (key.path.length === 1 && key.path[0] === 'id') return [`1 AS ${rank}`, `0::float8 AS ${number}`, `f.id COLLATE "C" AS ${text}`];
    const json = jsonAt(key.path, params);
    const type = `jsonb_typeof(${json})`;
    return [
      `CASE ${type} WHEN 'number' THEN 0 WHEN 'string' THEN 1 WHEN 'boolean' THEN 2 ELSE 3 END AS ${rank}`,
      `CASE ${type} WHEN 'number' THEN (${json})::float8 WHEN 'boolean' THEN CASE WHEN (${json})::boolean THEN 1 ELSE 0 END ELSE 0 END::float8 AS ${number}`,
      `(CASE WHEN ${type} = 'string' THEN ${json} #>> '{}' ELSE '' END) COLLATE "C" AS ${text}`,
    ];
  }).join(', ');
}
