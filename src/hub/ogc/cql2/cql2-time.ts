// CQL2 time literals (TIMESTAMP, DATE, INTERVAL) against the hub's instants createdAt and updatedAt (milliseconds since 1970).
import { hubError } from '../../../core/errors.js';
import type { FilterExpression, PropertyOperator } from '../../../core/feature-query.js';

/** The temporal functions an instant can take part in; the others relate intervals, which the hub does not store. */
export const TEMPORAL = ['t_before', 't_after', 't_intersects', 't_equals', 't_disjoint'];

const DAY = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

/** The milliseconds a literal covers, both ends included; an open end is undefined. */
interface Span {
  from?: number;
  to?: number;
  /** An INTERVAL, which no instant equals. */
  interval: boolean;
}

const invalid = (problem: string) => hubError('ogcInvalidFilter', { problem });
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const condition = (path: string[], op: PropertyOperator, value: number): FilterExpression => ({ kind: 'condition', condition: { path, op, values: [value] } });
const and = (items: FilterExpression[]): FilterExpression => (items.length === 1 ? items[0] : { kind: 'and', items });
const NEVER: FilterExpression = { kind: 'or', items: [] };

/** A DATE is its whole UTC day; a TIMESTAMP one millisecond. */
function spanOfText(text: unknown, what: string): Span {
  if (typeof text === 'string' && DATE.test(text)) {
    const start = Date.parse(`${text}T00:00:00Z`);
    if (!Number.isNaN(start)) return { from: start, to: start + DAY - 1, interval: false };
  }
  const time = typeof text === 'string' && DATE_TIME.test(text) ? Date.parse(text.toUpperCase()) : NaN;
  if (Number.isNaN(time)) throw invalid(`${what} must hold an RFC 3339 date-time with a time zone, or a date as YYYY-MM-DD`);
  return { from: time, to: time, interval: false };
}

function spanOf(literal: unknown, name: string): Span {
  if (isObject(literal) && 'timestamp' in literal) {
    if (typeof literal.timestamp !== 'string' || !DATE_TIME.test(literal.timestamp)) throw invalid('TIMESTAMP must hold an RFC 3339 date-time with a time zone');
    return spanOfText(literal.timestamp, 'TIMESTAMP');
  }
  if (isObject(literal) && 'date' in literal) {
    if (typeof literal.date !== 'string' || !DATE.test(literal.date)) throw invalid('DATE must hold a date as YYYY-MM-DD');
    return spanOfText(literal.date, 'DATE');
  }
  if (isObject(literal) && Array.isArray(literal.interval) && literal.interval.length === 2) {
    const [start, end] = literal.interval.map((edge: unknown) => {
      if (edge === '..') return undefined;
      if (isObject(edge) && ('timestamp' in edge || 'date' in edge)) return spanOf(edge, name);
      return spanOfText(edge, 'INTERVAL');
    });
    if (start?.from !== undefined && end?.to !== undefined && start.from > end.to) throw invalid('the INTERVAL ends before it starts');
    return { from: start?.from, to: end?.to, interval: true };
  }
  throw invalid(`${name} compares with TIMESTAMP(…), DATE(…) or INTERVAL(…) literals`);
}

/** The instant lies in the span: its open ends hold everything. */
function within(path: string[], span: Span): FilterExpression {
  const bounds = [
    ...(span.from === undefined ? [] : [condition(path, 'gte', span.from)]),
    ...(span.to === undefined ? [] : [condition(path, 'lte', span.to)]),
  ];
  return bounds.length === 0 ? { kind: 'and', items: [] } : and(bounds);
}

/**
 * A comparison of createdAt or updatedAt with a TIMESTAMP or a DATE: `= DATE` is within that day, `< DATE`
 * before it, `> DATE` after it.
 */
export function timeComparison(target: { name: string; path: string[] }, op: PropertyOperator, literal: unknown): FilterExpression {
  if (!isObject(literal) || !('timestamp' in literal || 'date' in literal)) throw invalid(`${target.name} compares with TIMESTAMP(…) or DATE(…) literals`);
  const { from, to } = spanOf(literal, target.name) as Required<Span>;
  switch (op) {
    case 'eq': return within(target.path, { from, to, interval: false });
    case 'ne': return { kind: 'not', item: within(target.path, { from, to, interval: false }) };
    case 'lt': return condition(target.path, 'lt', from);
    case 'lte': return condition(target.path, 'lte', to);
    case 'gt': return condition(target.path, 'gt', to);
    default: return condition(target.path, 'gte', from);
  }
}

/**
 * T_BEFORE, T_AFTER, T_INTERSECTS, T_EQUALS and T_DISJOINT of an instant and a literal. `propertyFirst` false
 * reads the function the other way round: `T_AFTER(literal, updatedAt)` is `T_BEFORE(updatedAt, literal)`.
 */
export function temporalFunction(op: string, target: { name: string; path: string[] }, literal: unknown, propertyFirst: boolean): FilterExpression {
  const span = spanOf(literal, target.name);
  const before = (propertyFirst ? op === 't_before' : op === 't_after');
  switch (op) {
    case 't_before':
    case 't_after':
      if (before) return span.from === undefined ? NEVER : condition(target.path, 'lt', span.from);
      return span.to === undefined ? NEVER : condition(target.path, 'gt', span.to);
    case 't_intersects':
      return within(target.path, span);
    case 't_equals':
      return span.interval ? NEVER : within(target.path, span);
    default:
      return { kind: 'not', item: within(target.path, span) };
  }
}
