// The sort keys of a sorted read in SQLite: each key's JSON type rank, number and string (core/feature-query.ts SortValue).
import type { SortKey } from '../../core/feature-query.js';
import { keyColumns } from '../shared/sort-keyset.js';
import { jsonPathLiteral } from './filter-sql.js';

/**
 * The columns `k<i>r, k<i>n, k<i>s` of each key over the rows `f` (with `id` and `json`). JSON booleans come out of
 * json_extract as 1 and 0, which is their number; strings compare as BINARY, SQLite's byte order of UTF-8.
 */
export function sortColumns(sort: readonly SortKey[]): string {
  return sort.flatMap((key, index) => {
    const [rank, number, text] = keyColumns(index);
    if (key.path.length === 1 && key.path[0] === 'id') return [`1 AS ${rank}`, `0 AS ${number}`, `f.id AS ${text}`];
    const path = jsonPathLiteral(key.path);
    const type = `json_type(f.json, ${path})`;
    const value = `json_extract(f.json, ${path})`;
    return [
      `CASE ${type} WHEN 'integer' THEN 0 WHEN 'real' THEN 0 WHEN 'text' THEN 1 WHEN 'true' THEN 2 WHEN 'false' THEN 2 ELSE 3 END AS ${rank}`,
      `CASE WHEN ${type} IN ('integer', 'real', 'true', 'false') THEN ${value} ELSE 0 END AS ${number}`,
      `CASE WHEN ${type} = 'text' THEN ${value} ELSE '' END AS ${text}`,
    ];
  }).join(', ');
}
