// Parses the `p.*` / `f.*` property filters of API.md 5.5 from the raw query string into storage conditions.
import { hubError, type HubError } from '../../core/errors.js';
import { NS } from '../../core/namespace-key.js';
import { typeScalar, typeText } from '../../core/typed-values.js';
import { normalizeTag } from '../../hub/tags.js';
import type { PropertyCondition, PropertyOperator } from '../../core/feature-query.js';
import { checkJsonText, checkJsonValue, MAX_JSON_DEPTH } from '../../core/json-limits.js';
import { checkListLength, formDecode, splitRawList, type RawQuery } from './raw-query.js';


/** Spellings in match priority: at one position the first hit is the longest one. */
const OPERATORS: ReadonlyArray<readonly [spelling: string, op: PropertyOperator]> = [
  ['=gte=', 'gte'], ['=lte=', 'lte'], ['=gt=', 'gt'], ['=lt=', 'lt'], ['=cs=', 'contains'],
  ['>=', 'gte'], ['<=', 'lte'], ['!=', 'ne'], ['@>', 'contains'], ['>', 'gt'], ['<', 'lt'], ['=', 'eq'],
];

const ORDERING_OPERATORS: ReadonlySet<PropertyOperator> = new Set(['gt', 'gte', 'lt', 'lte']);

const GEOMETRY_TYPES = ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon'];

/**
 * Operator characters that form-encoding clients escape (Python `requests` sends the key
 * `p.capacity>` as `p.capacity%3E=`); they are decoded before the operator search.
 */
const ENCODED_OPERATOR_CHARS = /%(3[CDEcde]|21|40)/g;

/** Decimal numbers, including `01234`, `-5`, `+2`, `1.5`, `.5`, `1.` and exponents such as `1e3`. */
type FilterValue = PropertyCondition['values'][number];

/** The longest filter path (`p.a.b.c` has 3 segments): no stored property is nested deeper (docs/decisions.md). */
const MAX_PROPERTY_PATH_DEPTH = MAX_JSON_DEPTH;

/** How the values of a key are typed: `f.id`, `f.tags` and `f.geometry.type` always compare text. */
type ValueKind = 'typed' | 'text' | 'tag' | 'geometryType';

interface Field {
  path: string[];
  kind: ValueKind;
}

/** One condition per filter segment: repeated keys are AND-ed, the values of one segment OR-ed. */
export function parsePropertyFilters(query: RawQuery): PropertyCondition[] {
  const segments = query.propertyFilterSegments();
  // Each filter is one more level of AND in the statement, so filters count with their values.
  checkListLength('p.*/f.* (property filters and their values)', segments.reduce((sum, segment) => sum + splitRawList(segment).length, 0));
  return segments.map(parseFilter);
}

function parseFilter(segment: string): PropertyCondition {
  const fail = (problem: string): HubError => hubError('invalidPropertyFilter', { filter: segment, problem });
  const decode = (text: string): string => {
    const decoded = formDecode(text);
    if (decoded === undefined) throw fail(`malformed percent-encoding in "${text}"`);
    return decoded;
  };

  const text = segment.replace(ENCODED_OPERATOR_CHARS, (_match, hex: string) =>
    String.fromCharCode(parseInt(hex, 16)));
  const found = findOperator(text);
  if (found === undefined) throw fail('no operator (=, !=, >, >=, <, <=, @>, =gt=, =gte=, =lt=, =lte=, =cs=)');

  const field = resolveField(decode(text.slice(0, found.index)), fail);
  const rawValue = stripStrayEquals(found.op, text.slice(found.index + found.spelling.length));
  const values = splitRawList(rawValue).map((part) => typeValue(decode(part), field.kind, found.op, fail));

  if (values.includes(null) && found.op !== 'eq' && found.op !== 'ne') {
    throw fail('.null can only be used with = and !=');
  }
  return { path: field.path, op: found.op, values };
}

/** The operator at the earliest position, the longest spelling there (so `p.a=x=y` has value `x=y`). */
function findOperator(text: string): { index: number; spelling: string; op: PropertyOperator } | undefined {
  for (let index = 0; index < text.length; index++) {
    for (const [spelling, op] of OPERATORS) {
      if (text.startsWith(spelling, index)) return { index, spelling, op };
    }
  }
  return undefined;
}

/**
 * Clients that append `=` to a bare key turn `p.capacity>50000` into `p.capacity>50000=`; for
 * ordering operators a trailing `=` can only be that artefact, so it is dropped.
 */
function stripStrayEquals(op: PropertyOperator, rawValue: string): string {
  return ORDERING_OPERATORS.has(op) && rawValue.endsWith('=') ? rawValue.slice(0, -1) : rawValue;
}

/** Maps a decoded `p.<path>` / `f.<path>` key to the member path from the feature root. */
function resolveField(key: string, fail: (problem: string) => HubError): Field {
  const name = key.slice(2);
  const path = name.split('.');
  if (path.length > MAX_PROPERTY_PATH_DEPTH) {
    throw hubError('propertyPathTooDeep', { path: `${key.slice(0, 40)}…`, parameter: 'a property filter', count: path.length, limit: MAX_PROPERTY_PATH_DEPTH });
  }
  if (path.includes('')) throw fail('the key needs a non-empty path such as p.name or f.id');
  if (key.startsWith('p.')) return { path: ['properties', ...path], kind: 'typed' };
  switch (name) {
    case 'id': return { path: ['id'], kind: 'text' };
    case 'createdAt':
    case 'updatedAt': return { path: ['properties', NS, name], kind: 'typed' };
    case 'tags': return { path: ['properties', NS, 'tags'], kind: 'tag' };
    case 'geometry.type': return { path: ['geometry', 'type'], kind: 'geometryType' };
    default: return { path, kind: 'typed' };
  }
}

function typeValue(
  text: string, kind: ValueKind, op: PropertyOperator, fail: (problem: string) => HubError,
): FilterValue {
  // Containment of an object or array (`p.items=cs={"k":1}`); commas inside it must be sent as %2C.
  if (op === 'contains' && (text.startsWith('{') || text.startsWith('['))) return parseJson(text, fail);
  const value = kind === 'typed' ? typeScalar(text) : typeText(text);
  if (typeof value !== 'string') return value;
  if (kind === 'tag') return normalizeTag(value);
  if (kind === 'geometryType') return canonicalGeometryType(value, fail);
  return value;
}

function canonicalGeometryType(value: string, fail: (problem: string) => HubError): string {
  const canonical = GEOMETRY_TYPES.find((type) => type.toLowerCase() === value.toLowerCase());
  if (canonical === undefined) throw fail(`unknown geometry type "${value}"; use one of ${GEOMETRY_TYPES.join(', ')} or .null`);
  return canonical;
}

function parseJson(text: string, fail: (problem: string) => HubError): object {
  checkJsonText(Buffer.from(text), 'property filter value', MAX_JSON_DEPTH);
  let value: object;
  try {
    value = JSON.parse(text) as object;
  } catch {
    throw fail(`invalid JSON value ${text}`);
  }
  checkJsonValue(value, 'property filter value');
  return value;
}
