// Compiles tag expressions and property conditions into PostgreSQL WHERE clauses, with the semantics of the SQLite engine.
import { hubError } from '../../core/errors.js';
import { NS } from '../../core/namespace-key.js';
import type { TextFold } from '../../core/unicode-folds.js';
import { type FeatureFilter, type FilterExpression, type JsonScalar, type NumericExpression, type PropertyCondition, SAMPLE_HASH, type TagExpression } from '../../core/feature-query.js';
import { FOLD_FUNCTIONS } from './fold-sql.js';
import { standIn } from './nul-stand-in.js';

/** Collects statement parameters and hands out their `$n` placeholders. */
export class SqlParams {
  readonly values: unknown[] = [];

  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}

const comparison = { eq: '=', ne: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/** A JSON array index such as `0` or `-1`: `#>` would step into arrays with it, SQLite's `$."0"` does not. */
const ARRAY_INDEX = /^-?\d+$/;

/** A path into the user properties, which the `properties` column holds (without the namespace, see feature-rows.ts). */
const isUserProperty = (path: readonly string[]) => path[0] === 'properties' && path[1] !== NS;

/** `f.tags` / `p.@ns:com:here:xyz.tags`: the namespace's tags, which the `tags` column holds too. */
const isTagsPath = (path: readonly string[]) => path.length === 3 && path[0] === 'properties' && path[1] === NS && path[2] === 'tags';

/**
 * The jsonb value at `path` (from the feature root), or SQL NULL when it is missing. User properties come from
 * the indexed `properties` column and the id from its column; other members are read from the stored text.
 */
export function jsonAt(path: string[], params: SqlParams): string {
  if (path.length === 1 && path[0] === 'id') return 'to_jsonb(f.id)';
  if (path.length === 2 && path[0] === 'geometry' && path[1] === 'type') return 'to_jsonb(f.geometry_type)';
  const [root, rest] = isUserProperty(path) ? ['f.properties', path.slice(1)] : ['(f.feature::jsonb)', path];
  if (rest.length === 0) return root;
  const value = `(${root} #> ${params.add(rest)}::text[])`;
  // Members named like array indexes only match inside objects.
  const guards = rest.flatMap((key, index) => ARRAY_INDEX.test(key)
    ? [`jsonb_typeof(${root} #> ${params.add(rest.slice(0, index))}::text[]) = 'object'`]
    : []);
  return guards.length === 0 ? value : `(CASE WHEN ${guards.join(' AND ')} THEN ${value} END)`;
}

/** `{"a":{"b":value}}` for the path `["a","b"]`: jsonb containment of it is type-aware equality, served by the GIN index. */
function nestedObject(path: string[], value: JsonScalar): string {
  let json: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) json = { [path[i]]: json };
  return JSON.stringify(json);
}

const typeOf = (value: JsonScalar | object): string =>
  typeof value === 'string' ? 'string' : typeof value === 'number' ? 'number' : 'boolean';

/** The SQL scalar of a jsonb value of the given type; only evaluated once the type is known. */
function scalarOf(json: string, value: JsonScalar | object, params: SqlParams): { column: string; param: string } {
  if (typeof value === 'string') return { column: `(${json} #>> '{}') COLLATE "C"`, param: `${params.add(value)}::text` };
  if (typeof value === 'number') return { column: `(${json})::numeric`, param: `${params.add(value)}::numeric` };
  return { column: `(${json})::boolean`, param: `${params.add(value)}::boolean` };
}

function compileValue(condition: PropertyCondition, value: JsonScalar | object, params: SqlParams): string {
  const { path, op } = condition;
  // The namespace's tags (always an array of strings) are the tags column, whose GIN index answers membership.
  if (op === 'contains' && isTagsPath(path)) return typeof value === 'string' ? `f.tags @> ARRAY[${params.add(value)}::text]` : 'false';
  if (op === 'contains') {
    const json = jsonAt(path, params);
    return `(jsonb_typeof(${json}) = 'array' AND ${json} @> ${params.add(JSON.stringify([value]))}::jsonb)`;
  }
  if (typeof value === 'object' && value !== null) {
    throw hubError('invalidPropertyFilter', { filter: path.join('.'), problem: 'only =cs= accepts object or array values' });
  }
  if (op === 'eq' && value !== null && isUserProperty(path) && path.length > 1) {
    return `f.properties @> ${params.add(nestedObject(path.slice(1), value))}::jsonb`;
  }

  if (path.length === 1 && path[0] === 'id' && typeof value === 'string') {
    return `f.id ${comparison[op]} ${params.add(value)}::text`;
  }
  const json = jsonAt(path, params);
  const type = `jsonb_typeof(${json})`;
  if (value === null) {
    return op === 'ne' ? `(${type} IS NOT NULL AND ${type} <> 'null')` : `(${type} IS NULL OR ${type} = 'null')`;
  }
  const { column, param } = scalarOf(json, value, params);
  const sameType = `${type} = '${typeOf(value)}'`;
  // "Not equal" also holds for a present value of another JSON type (jsonb semantics); a missing one never matches.
  // CASE keeps the casts away from values of another type: AND does not fix the order of evaluation.
  if (op === 'ne') return `(${type} IS NOT NULL AND NOT (CASE WHEN ${sameType} THEN ${column} = ${param} ELSE false END))`;
  return `(CASE WHEN ${sameType} THEN ${column} ${comparison[op]} ${param} ELSE false END)`;
}

function compileCondition(condition: PropertyCondition, params: SqlParams): string {
  const alternatives = condition.values.map((value) => compileValue(condition, value, params));
  return alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`;
}

/**
 * Under a NOT a condition on a missing or null property must stay unknown (SQL NULL), or NOT would turn it true;
 * elsewhere unknown and false both leave the feature out, and the plain condition is kept (and with it the GIN index).
 */
function unknownWhenAbsent(path: string[], sql: string, params: SqlParams): string {
  const type = `jsonb_typeof(${jsonAt(path, params)})`;
  return `(CASE WHEN ${type} IS NULL OR ${type} = 'null' THEN NULL ELSE ${sql} END)`;
}

/** A numeric expression as SQL: NULL for a property that is no number, and (hub_cql2_arithmetic) for a result that is no finite number. */
function compileNumeric(expression: NumericExpression, params: SqlParams): string {
  switch (expression.kind) {
    case 'number':
      return `${params.add(expression.value)}::float8`;
    case 'property': {
      const json = jsonAt(standIn(expression.path), params);
      return `(CASE WHEN jsonb_typeof(${json}) = 'number' THEN (${json})::float8 END)`;
    }
    case 'arithmetic':
      return `hub_cql2_arithmetic('${expression.op}', ${compileNumeric(expression.left, params)}, ${compileNumeric(expression.right, params)})`;
  }
}

/** Two properties compare when their JSON types agree (numbers as doubles, strings by UTF-8 bytes, booleans); else NULL. */
function compileProperties(op: keyof typeof comparison, left: string[], right: string[], params: SqlParams): string {
  const [a, b] = [jsonAt(left, params), jsonAt(right, params)];
  const [typeA, typeB] = [`jsonb_typeof(${a})`, `jsonb_typeof(${b})`];
  const sign = comparison[op];
  return `(CASE WHEN ${typeA} <> ${typeB} THEN NULL
    WHEN ${typeA} = 'number' THEN (${a})::float8 ${sign} (${b})::float8
    WHEN ${typeA} = 'string' THEN ((${a} #>> '{}') COLLATE "C") ${sign} ((${b} #>> '{}') COLLATE "C")
    WHEN ${typeA} = 'boolean' THEN (${a})::boolean ${sign} (${b})::boolean END)`;
}

/** A text folded by each fold in turn (CASEI, ACCENTI). */
const folded = (text: string, folds: readonly TextFold[]): string => folds.reduce((sql, fold) => `${FOLD_FUNCTIONS[fold]}(${sql})`, `(${text})`);

/** CQL2 LIKE patterns escape with a backslash, as PostgreSQL's LIKE does by default; the hub refuses one ending in a lone backslash. */
function compileExpression(expression: FilterExpression, params: SqlParams, underNot: boolean): string {
  switch (expression.kind) {
    case 'and':
    case 'or': {
      if (expression.items.length === 0) return expression.kind === 'and' ? 'true' : 'false';
      const items = expression.items.map((item) => compileExpression(item, params, underNot));
      return `(${items.join(expression.kind === 'and' ? ' AND ' : ' OR ')})`;
    }
    case 'not':
      return `(NOT ${compileExpression(expression.item, params, true)})`;
    case 'condition': {
      const condition = standIn(expression.condition);
      const sql = compileCondition(condition, params);
      return underNot && !condition.values.includes(null) ? unknownWhenAbsent(condition.path, sql, params) : sql;
    }
    case 'like': {
      const json = jsonAt(expression.path, params);
      const sql = `(jsonb_typeof(${json}) = 'string' AND (${folded(`${json} #>> '{}'`, expression.folds ?? [])} COLLATE "C") LIKE ${params.add(standIn(expression.pattern))}::text)`;
      return underNot ? unknownWhenAbsent(expression.path, sql, params) : sql;
    }
    case 'text': {
      const json = jsonAt(standIn(expression.path), params);
      const value = `(${folded(`${json} #>> '{}'`, expression.folds)} COLLATE "C")`;
      return `(CASE WHEN jsonb_typeof(${json}) = 'string' THEN ${value} ${comparison[expression.op]} ${params.add(standIn(expression.value))}::text END)`;
    }
    case 'numeric':
      return `(${compileNumeric(expression.left, params)} ${comparison[expression.op]} ${compileNumeric(expression.right, params)})`;
    case 'properties':
      return compileProperties(expression.op, standIn(expression.left), standIn(expression.right), params);
  }
}

/** Each AND-group is one array containment, served by the GIN index on tags. */
function compileTags(tags: TagExpression, params: SqlParams): string {
  return `(${tags.map((group) => `f.tags @> ${params.add(group)}::text[]`).join(' OR ')})`;
}

/**
 * The WHERE conditions (joined with AND) for a filter over the features table aliased `f`. Filter
 * values compare with U+FFFD for U+0000, as the indexed copies hold it (see nul-stand-in.ts).
 */
export function compileFilter(filter: FeatureFilter, params: SqlParams): string {
  const clauses: string[] = [];
  if (filter.tags && filter.tags.length > 0) clauses.push(compileTags(standIn(filter.tags), params));
  for (const condition of filter.properties ?? []) clauses.push(compileCondition(standIn(condition), params));
  if (filter.where) clauses.push(compileExpression(filter.where, params, false));
  if (filter.sample !== undefined && filter.sample > 1) {
    clauses.push(`((f.seq * ${SAMPLE_HASH.multiplier}) % ${SAMPLE_HASH.modulus}) % ${params.add(filter.sample)}::bigint = 0`);
  }
  return clauses.length > 0 ? clauses.join(' AND ') : 'true';
}

/** True when the filter selects every feature. */
export function isEmptyFilter(filter: FeatureFilter): boolean {
  return (filter.tags ?? []).length === 0 && (filter.properties ?? []).length === 0 && filter.where === undefined && !(filter.sample !== undefined && filter.sample > 1);
}
