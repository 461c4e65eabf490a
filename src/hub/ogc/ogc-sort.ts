// sortby of OGC items (OGC API Features Part 8): its names as sort keys over the collection's sortables, and the handle of a sorted page.
import { createHash } from 'node:crypto';
import { hubError } from '../../core/errors.js';
import type { SortKey, SortValue } from '../../core/feature-query.js';
import type { FilterTarget } from './cql2/cql2-filter.js';

/** One term of `sortby`: `+name` or `name` ascending, `-name` descending. */
export interface SortbyTerm {
  name: string;
  descending: boolean;
}

/** At most this many terms: each is three computed columns of every match. */
export const MAX_SORT_TERMS = 8;

const ID_KEY: SortKey = { path: ['id'], descending: false };

/** What may be sorted by: every queryable but the geometry. */
export const sortablesOf = <T extends FilterTarget>(queryables: readonly T[]): T[] => queryables.filter((target) => target.kind !== 'geometry');

/**
 * The terms as sort keys over the sortables, the id last (ascending, unless a term sorts by it): ids are unique
 * within a space, so the order is total and a page resumes exactly after the previous one.
 */
export function sortKeys(terms: readonly SortbyTerm[], queryables: readonly FilterTarget[]): SortKey[] {
  const sortables = new Map(sortablesOf(queryables).map((target) => [target.name, target]));
  const keys = terms.map((term): SortKey => {
    const target = sortables.get(term.name);
    if (!target) throw hubError('ogcUnknownSortable', { name: JSON.stringify(term.name.slice(0, 100)) });
    return { path: target.path, descending: term.descending };
  });
  const byId = keys.findIndex((key) => key.path.length === 1 && key.path[0] === 'id');
  // Keys after the id could never decide anything.
  return byId >= 0 ? keys.slice(0, byId + 1) : [...keys, ID_KEY];
}

/** The terms as one text: a handle is valid only for the sort it was made for. */
export const sortbyText = (terms: readonly SortbyTerm[]): string => terms.map((term) => `${term.descending ? '-' : '+'}${term.name}`).join(',');

/** A checksum, not a secret: it tells a damaged or edited handle from one the hub made (the reader may read the features anyway). */
const checksum = (payload: string): string => createHash('sha256').update(payload).digest('base64url').slice(0, 16);

/** The handle of the next page: the sort and where the page's last feature stands, as base64url JSON and its checksum. */
export function sortHandle(terms: readonly SortbyTerm[], last: readonly SortValue[]): string {
  const payload = Buffer.from(JSON.stringify([sortbyText(terms), last])).toString('base64url');
  return `${payload}.${checksum(payload)}`;
}

const isSortValue = (value: unknown): value is SortValue => Array.isArray(value) && value.length === 3
  && Number.isInteger(value[0]) && value[0] >= 0 && value[0] <= 3 && typeof value[1] === 'number' && Number.isFinite(value[1]) && typeof value[2] === 'string';

/** Where the previous page ended, from its handle; a handle of another sort, or not made by the hub, is a 400. */
export function positionOfHandle(handle: string, terms: readonly SortbyTerm[], keyCount: number): SortValue[] {
  const refuse = () => hubError('ogcInvalidSortHandle', { sortby: JSON.stringify(sortbyText(terms).slice(0, 200)) });
  const [payload, sum, ...rest] = handle.split('.');
  if (rest.length > 0 || sum === undefined || checksum(payload) !== sum) throw refuse();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw refuse();
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== sortbyText(terms)) throw refuse();
  const position: unknown = decoded[1];
  if (!Array.isArray(position) || position.length !== keyCount || !position.every(isSortValue)) throw refuse();
  return position;
}
