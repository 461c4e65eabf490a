// The k-way merge of a virtual or composite space's sorted reads: each layer's shown rows in the sort order, merged into one page.
import type { SortKey, SortValue, SortedPage } from '../../core/feature-query.js';

/** A row one layer's sorted read found and the space shows, with its key values as the engine computed them. */
export interface LayerRow {
  layer: number;
  text: string;
  keys: SortValue[];
}

/**
 * Where a layered sorted page resumes: after the row at `keys` of `layer`. Rows equal on every key (the same id in
 * two layers of a group) stand in layer order, so a layer above `layer` also shows the row equal to `keys`.
 */
export interface LayerPosition {
  layer: number;
  keys: SortValue[];
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');

/**
 * Compares key values as both engines order them (core/feature-query.ts SortValue): type rank, number, then the
 * string by its UTF-8 bytes (JavaScript's `<` compares UTF-16 units, which orders characters past U+FFFF otherwise).
 */
export function compareKeys(sort: readonly SortKey[], a: readonly SortValue[], b: readonly SortValue[]): number {
  for (const [index, key] of sort.entries()) {
    const [x, y] = [a[index], b[index]];
    const order = Math.sign(x[0] - y[0]) || Math.sign(x[1] - y[1]) || Buffer.compare(utf8(x[2]), utf8(y[2]));
    if (order !== 0) return key.descending ? -order : order;
  }
  return 0;
}

/**
 * The handle's position (ogc-sort.ts) keeps the plain format: one value per key, the id key last. The id key's number,
 * 0 in every engine's order, carries the layer of the page's last row here; the engines are given it back as 0.
 */
export function positionOf(after: readonly SortValue[]): LayerPosition {
  const keys = after.map((value): SortValue => [...value]);
  const id = keys[keys.length - 1];
  const layer = id[1];
  id[1] = 0;
  return { layer, keys };
}

/**
 * The layers' rows (each list in the sort order) merged k-way, ties by layer, up to `limit`; `last` names the last row's
 * layer. With `distinct`, rows equal on every key (in a sort by id alone: one feature's versions) are one row, the
 * lowest layer's, and every list holding it moves past it.
 */
export function mergeSorted(sort: readonly SortKey[], lists: ReadonlyArray<readonly LayerRow[]>, limit: number, distinct = false): SortedPage {
  const heads = lists.map(() => 0);
  const rows: LayerRow[] = [];
  while (rows.length < limit) {
    let best = -1;
    for (const [list, rowsOfList] of lists.entries()) {
      if (heads[list] >= rowsOfList.length) continue;
      // Lists come in layer order, so a strict comparison leaves a tie to the lower layer.
      if (best < 0 || compareKeys(sort, rowsOfList[heads[list]].keys, lists[best][heads[best]].keys) < 0) best = list;
    }
    if (best < 0) break;
    const row = lists[best][heads[best]];
    rows.push(row);
    for (const [list, rowsOfList] of lists.entries()) {
      if (list === best || (distinct && heads[list] < rowsOfList.length && compareKeys(sort, rowsOfList[heads[list]].keys, row.keys) === 0)) heads[list] += 1;
    }
  }
  const last = rows[rows.length - 1];
  const position = last ? last.keys.map((value, index): SortValue => (index === last.keys.length - 1 ? [value[0], last.layer, value[2]] : value)) : undefined;
  return { texts: rows.map((row) => row.text), keys: rows.map((row) => row.keys), ...(position ? { last: position } : {}) };
}
