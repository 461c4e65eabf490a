// Parses the query parameters of OGC API Features items requests: limit, bbox, bbox-crs, datetime, sortby, the paging handle and property equality.
import { type FilterLanguage, parseFilter } from '../../hub/ogc/cql2/cql2-parse.js';
import { parseHeadHandle } from './iterate-handle.js';
import { MAX_SORT_TERMS, type SortbyTerm } from '../../hub/ogc/ogc-sort.js';
import { hubError } from '../../core/errors.js';
import type { PropertyCondition } from '../../core/feature-query.js';
import { ownMember } from '../../core/json.js';
import { DECIMAL, typeScalar } from '../../core/typed-values.js';
import type { BBox } from '../../geo/bbox.js';
import { checkListLength, formDecode, type RawQuery } from './raw-query.js';

export const CRS84 = 'http://www.opengis.net/def/crs/OGC/1.3/CRS84';
/** CRS84 with ellipsoidal heights: what a 6-number bbox is given in. */
const CRS84H = 'http://www.opengis.net/def/crs/OGC/0/CRS84h';

export const OGC_DEFAULT_LIMIT = 10;
export const OGC_MAX_LIMIT = 10_000;

const NAMESPACE = '@ns:com:here:xyz';

/** Parameters with a meaning of their own; every other parameter is a property equality filter. */
const RESERVED = new Set(['f', 'limit', 'bbox', 'bbox-crs', 'crs', 'datetime', 'handle', 'access_token', 'version', 'versionref', 'filter', 'filter-lang', 'filter-crs', 'sortby']);

/** `cql-text` is the name of drafts of the standard, which GDAL 3.6 sends; the language is read as CQL2 text. */
const FILTER_LANGUAGES: Record<string, FilterLanguage> = { 'cql2-text': 'cql2-text', 'cql-text': 'cql2-text', 'cql2-json': 'cql2-json' };

export function ogcLimit(query: RawQuery): number {
  const value = query.first('limit');
  if (value === undefined) return OGC_DEFAULT_LIMIT;
  const parsed = /^\d{1,6}$/.test(value) ? Number(value) : NaN;
  if (!(parsed >= 1 && parsed <= OGC_MAX_LIMIT)) throw hubError('ogcLimitOutOfRange', { max: OGC_MAX_LIMIT });
  return parsed;
}

/** The last insertion sequence of the previous page, as put into `next` links; 0 starts at the beginning. */
export function ogcHandle(query: RawQuery): number {
  return parseHeadHandle(query.first('handle'));
}

/**
 * `sortby=+name,-other` (OGC API Features Part 8): `+` or nothing ascending, `-` descending. A `+` left unencoded in
 * the URL arrives as a space, which is ascending too. Undefined when not given.
 */
export function ogcSortby(query: RawQuery): SortbyTerm[] | undefined {
  const given = query.occurrences('sortby');
  if (given.length === 0) return undefined;
  if (given.length > 1) throw hubError('ogcInvalidSortby', { problem: 'give the parameter sortby once' });
  const terms = given[0].split(',').map((text): SortbyTerm => {
    const term = text.trim();
    const descending = term.startsWith('-');
    const name = term.startsWith('-') || term.startsWith('+') ? term.slice(1).trim() : term;
    if (name === '') throw hubError('ogcInvalidSortby', { problem: 'every comma-separated term needs a name, optionally after + or -' });
    return { name, descending };
  });
  if (terms.length > MAX_SORT_TERMS) throw hubError('ogcInvalidSortby', { problem: `at most ${MAX_SORT_TERMS} terms` });
  if (new Set(terms.map((term) => term.name)).size < terms.length) throw hubError('ogcInvalidSortby', { problem: 'a name may be given once' });
  return terms;
}

/** `crs` and `bbox-crs` may only name CRS84 (CRS84h for a bbox with heights). */
export function checkCrs(query: RawQuery): void {
  const crs = query.first('crs');
  if (crs !== undefined && crs !== CRS84) throw hubError('ogcUnsupportedCrs', { name: 'crs', crs: CRS84 });
  const bboxCrs = query.first('bbox-crs');
  if (bboxCrs !== undefined && bboxCrs !== CRS84 && bboxCrs !== CRS84H) throw hubError('ogcUnsupportedCrs', { name: 'bbox-crs', crs: CRS84 });
}

/**
 * `bbox=west,south,east,north` (or with heights `west,south,min,east,north,max`, heights ignored) in CRS84;
 * west > east crosses the antimeridian. Undefined when not given.
 */
export function ogcBbox(query: RawQuery): BBox | undefined {
  const given = query.occurrences('bbox');
  if (given.length === 0) return undefined;
  if (given.length > 1) throw hubError('ogcInvalidBbox', { problem: 'give it once' });
  const parts = given[0].split(',').map((part) => part.trim());
  if (parts.length !== 4 && parts.length !== 6) throw hubError('ogcInvalidBbox', { problem: `expected 4 numbers (or 6 with heights), got ${parts.length}` });
  const numbers = parts.map((part) => (DECIMAL.test(part) ? Number(part) : NaN));
  if (numbers.some((number) => !Number.isFinite(number))) throw hubError('ogcInvalidBbox', { problem: 'every value must be a decimal number' });
  const [west, south, east, north] = parts.length === 4 ? numbers : [numbers[0], numbers[1], numbers[3], numbers[4]];
  if ([west, east].some((x) => Math.abs(x) > 180)) throw hubError('ogcInvalidBbox', { problem: 'longitudes must lie between -180 and 180' });
  if ([south, north].some((y) => Math.abs(y) > 90)) throw hubError('ogcInvalidBbox', { problem: 'latitudes must lie between -90 and 90' });
  if (south > north) throw hubError('ogcInvalidBbox', { problem: 'the south edge lies north of the north edge' });
  return [west, south, east, north];
}

/** RFC 3339 date-times with a zone; the time of day may carry fractions of a second. */
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function instant(text: string): number {
  const time = DATE_TIME.test(text) ? Date.parse(text.toUpperCase()) : NaN;
  if (Number.isNaN(time)) throw hubError('ogcInvalidDatetime', { problem: `"${text.slice(0, 40)}" is not an RFC 3339 date-time with a time zone` });
  return time;
}

/**
 * `datetime` against the features' `updatedAt` (milliseconds since 1970): an instant matches that very
 * millisecond, an interval `start/end` includes both ends, `..` or an empty side leaves it open.
 */
export function ogcDatetime(query: RawQuery): PropertyCondition[] {
  const value = query.first('datetime');
  if (value === undefined) return [];
  const path = ['properties', NAMESPACE, 'updatedAt'];
  const sides = value.split('/');
  if (sides.length === 1) return [{ path, op: 'eq', values: [instant(value)] }];
  if (sides.length !== 2) throw hubError('ogcInvalidDatetime', { problem: 'an interval has exactly one "/"' });
  const open = (side: string) => side === '' || side === '..';
  if (open(sides[0]) && open(sides[1])) throw hubError('ogcInvalidDatetime', { problem: 'at least one end of the interval must be given' });
  const conditions: PropertyCondition[] = [];
  const start = open(sides[0]) ? undefined : instant(sides[0]);
  const end = open(sides[1]) ? undefined : instant(sides[1]);
  if (start !== undefined && end !== undefined && start > end) throw hubError('ogcInvalidDatetime', { problem: 'the interval ends before it starts' });
  if (start !== undefined) conditions.push({ path, op: 'gte', values: [start] });
  if (end !== undefined) conditions.push({ path, op: 'lte', values: [end] });
  return conditions;
}

/**
 * Every parameter that is not reserved is `name=value`: the property `name` equals the value, typed as the
 * hub's `p.name=value` is (numbers, booleans, quoted strings, `.null`; API.md 5.5), where a number or boolean
 * matches its text too. Values are not split on commas.
 */
export function ogcPropertyFilters(query: RawQuery): PropertyCondition[] {
  const conditions: PropertyCondition[] = [];
  for (const segment of query.rawSegmentsStartingWith('')) {
    const equals = segment.indexOf('=');
    const name = formDecode(equals < 0 ? segment : segment.slice(0, equals));
    if (name !== undefined && RESERVED.has(name.toLowerCase())) continue;
    const value = equals < 0 ? '' : formDecode(segment.slice(equals + 1));
    if (name === undefined || value === undefined) throw hubError('ogcInvalidFilterName', { problem: 'malformed percent-encoding' });
    if (name === '') throw hubError('ogcInvalidFilterName', { problem: 'a filter needs a property name' });
    const typed = typeScalar(value);
    // A number or boolean also matches its text: GDAL quotes every literal, and stored values are often numeric strings.
    const values = typeof typed === 'number' || typeof typed === 'boolean' ? [typed, value] : [typed];
    conditions.push({ path: ['properties', name], op: 'eq', values });
  }
  checkListLength('property filters', conditions.length);
  return conditions;
}

/**
 * `filter` in `filter-lang` (CQL2 text by default) as its CQL2-JSON tree; `filter-crs` may only name CRS84, the
 * only CRS of geometry literals. Undefined when no filter is given.
 */
export function ogcFilter(query: RawQuery): unknown {
  const crs = query.first('filter-crs');
  if (crs !== undefined && crs !== CRS84) throw hubError('ogcUnsupportedCrs', { name: 'filter-crs', crs: CRS84 });
  const given = query.occurrences('filter');
  const langs = query.occurrences('filter-lang');
  const language = langs.length === 0 ? 'cql2-text' : ownMember(FILTER_LANGUAGES, langs[0]);
  if (language === undefined || langs.length > 1) throw hubError('ogcUnsupportedFilterLang');
  if (given.length === 0) return undefined;
  if (given.length > 1) throw hubError('ogcInvalidFilter', { problem: 'give the parameter filter once' });
  return parseFilter(given[0], language);
}
