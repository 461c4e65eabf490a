// Compiles tag expressions and property conditions into SQLite WHERE clauses over the stored JSON.
import { hubError } from '../../core/errors.js';
import type { TextFold } from '../../core/unicode-folds.js';
import { type FeatureFilter, type FilterExpression, type JsonScalar, type NumericExpression, type PropertyCondition, SAMPLE_HASH, type TagExpression } from '../../core/feature-query.js';

export interface SqlFragment {
  sql: string;
  params: unknown[];
}

const comparison = { eq: '=', ne: '!=', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const;

/**
 * `["properties","@ns:com:here:xyz","tags"]` → the SQL literal `'$."properties"."@ns:com:here:xyz"."tags"'`.
 * Each label is a JSON string, so `"` and `\` inside a property name are escaped the way SQLite's
 * JSON path labels decode them.
 */
export function jsonPathLiteral(path: string[]): string {
  const jsonPath = '$' + path.map((key) => `.${JSON.stringify(key)}`).join('');
  return `'${jsonPath.replaceAll("'", "''")}'`;
}

function sqlTypeTest(value: JsonScalar | object): string {
  if (typeof value === 'string') return "= 'text'";
  if (typeof value === 'number') return "IN ('integer','real')";
  if (typeof value === 'boolean') return "IN ('true','false')";
  return "= 'null'";
}

/** SQLite's json_extract yields 1/0 for JSON booleans. */
function sqlValue(value: JsonScalar): unknown {
  return typeof value === 'boolean' ? (value ? 1 : 0) : value;
}

function compileValue(column: string, path: string, condition: PropertyCondition, value: JsonScalar | object, params: unknown[]): string {
  const type = `json_type(${column}, ${path})`;
  if (condition.op === 'contains') {
    params.push(JSON.stringify([value]));
    return `(${type} = 'array' AND hub_json_contains(json_extract(${column}, ${path}), ?))`;
  }
  if (value === null) {
    return condition.op === 'ne' ? `(${type} IS NOT NULL AND ${type} != 'null')` : `(${type} IS NULL OR ${type} = 'null')`;
  }
  if (typeof value === 'object') {
    throw hubError('invalidPropertyFilter', { filter: condition.path.join('.'), problem: 'only =cs= accepts object or array values' });
  }
  params.push(sqlValue(value));
  const sameType = `${type} ${sqlTypeTest(value)}`;
  const extracted = `json_extract(${column}, ${path})`;
  // "Not equal" also holds for a present value of another JSON type (jsonb semantics); a missing one never matches.
  if (condition.op === 'ne') return `(${type} IS NOT NULL AND NOT (${sameType} AND ${extracted} = ?))`;
  return `(${sameType} AND ${extracted} ${comparison[condition.op]} ?)`;
}

function compileCondition(column: string, condition: PropertyCondition, params: unknown[]): string {
  const path = jsonPathLiteral(condition.path);
  const alternatives = condition.values.map((value) => compileValue(column, path, condition, value, params));
  return alternatives.length === 1 ? alternatives[0] : `(${alternatives.join(' OR ')})`;
}

/** A CQL2 LIKE pattern as a GLOB pattern: GLOB is case-sensitive, as CQL2's LIKE is, where SQLite's LIKE is not. */
function globPattern(pattern: string): string {
  return pattern.replace(/\\(.)|[%_*?[]/gsu, (match: string, escaped: string | undefined) => {
    if (escaped !== undefined) return '*?['.includes(escaped) ? `[${escaped}]` : escaped;
    if (match === '%') return '*';
    if (match === '_') return '?';
    return `[${match}]`;
  });
}

/**
 * Under a NOT a condition on a missing or null property must stay unknown (SQL NULL), or NOT would turn it true;
 * elsewhere unknown and false both leave the feature out, and the plain condition is kept.
 */
function unknownWhenAbsent(path: string[], sql: string): string {
  const type = `json_type(f.json, ${jsonPathLiteral(path)})`;
  return `(CASE WHEN ${type} IS NULL OR ${type} = 'null' THEN NULL ELSE ${sql} END)`;
}

const NUMBER = "IN ('integer','real')";

/** A text folded by each fold in turn (CASEI, ACCENTI), by the function sqlite-storage.ts registers. */
const folded = (text: string, folds: readonly TextFold[]): string => folds.reduce((sql, fold) => `hub_cql2_fold('${fold}', ${sql})`, text);

/** A numeric expression as SQL: NULL for a property that is no number, and (hub_cql2_*) for a result that is no finite number. */
function compileNumeric(expression: NumericExpression, params: unknown[]): string {
  switch (expression.kind) {
    case 'number':
      params.push(expression.value);
      return 'CAST(? AS REAL)';
    case 'property': {
      const path = jsonPathLiteral(expression.path);
      return `(CASE WHEN json_type(f.json, ${path}) ${NUMBER} THEN CAST(json_extract(f.json, ${path}) AS REAL) END)`;
    }
    case 'arithmetic': {
      const [left, right] = [compileNumeric(expression.left, params), compileNumeric(expression.right, params)];
      return expression.op === '^' ? `hub_cql2_finite(pow(${left}, ${right}))` : `hub_cql2_arithmetic('${expression.op}', ${left}, ${right})`;
    }
  }
}

/** Two properties compare when their JSON types agree (numbers as doubles, strings by UTF-8 bytes, booleans as 0 and 1); else NULL. */
function compileProperties(op: keyof typeof comparison, left: string[], right: string[]): string {
  const [a, b] = [jsonPathLiteral(left), jsonPathLiteral(right)];
  const [typeA, typeB] = [`json_type(f.json, ${a})`, `json_type(f.json, ${b})`];
  const [valueA, valueB] = [`json_extract(f.json, ${a})`, `json_extract(f.json, ${b})`];
  return `(CASE WHEN ${typeA} ${NUMBER} AND ${typeB} ${NUMBER} THEN CAST(${valueA} AS REAL) ${comparison[op]} CAST(${valueB} AS REAL)
    WHEN (${typeA} = 'text' AND ${typeB} = 'text') OR (${typeA} IN ('true','false') AND ${typeB} IN ('true','false')) THEN ${valueA} ${comparison[op]} ${valueB} END)`;
}

function compileExpression(expression: FilterExpression, params: unknown[], underNot: boolean): string {
  switch (expression.kind) {
    case 'and':
    case 'or': {
      if (expression.items.length === 0) return expression.kind === 'and' ? '1' : '0';
      const items = expression.items.map((item) => compileExpression(item, params, underNot));
      return `(${items.join(expression.kind === 'and' ? ' AND ' : ' OR ')})`;
    }
    case 'not':
      return `(NOT ${compileExpression(expression.item, params, true)})`;
    case 'condition': {
      const sql = compileCondition('f.json', expression.condition, params);
      return underNot && !expression.condition.values.includes(null) ? unknownWhenAbsent(expression.condition.path, sql) : sql;
    }
    case 'like': {
      const path = jsonPathLiteral(expression.path);
      params.push(globPattern(expression.pattern));
      const sql = `(json_type(f.json, ${path}) = 'text' AND ${folded(`json_extract(f.json, ${path})`, expression.folds ?? [])} GLOB ?)`;
      return underNot ? unknownWhenAbsent(expression.path, sql) : sql;
    }
    case 'text': {
      const path = jsonPathLiteral(expression.path);
      params.push(expression.value);
      const value = folded(`json_extract(f.json, ${path})`, expression.folds);
      return `(CASE WHEN json_type(f.json, ${path}) = 'text' THEN ${value} ${comparison[expression.op]} ? END)`;
    }
    case 'numeric':
      return `(${compileNumeric(expression.left, params)} ${comparison[expression.op]} ${compileNumeric(expression.right, params)})`;
    case 'properties':
      return compileProperties(expression.op, expression.left, expression.right);
  }
}

/** A superseded state's tags are only in its text: the tag index holds the current rows' (by seq, which states share). */
const TAG_IN_INDEX = 'f.seq IN (SELECT t.seq FROM feature_tags t WHERE t.sid = f.sid AND t.tag = ?)';
const TAG_IN_TEXT = `EXISTS (SELECT 1 FROM json_each(f.json, '$.properties."@ns:com:here:xyz".tags') t WHERE t.value = ?)`;

function compileTags(tags: TagExpression, params: unknown[], fromText: boolean): string {
  const groups = tags.map((group) => {
    const members = group.map((tag) => {
      params.push(tag);
      return fromText ? TAG_IN_TEXT : TAG_IN_INDEX;
    });
    return `(${members.join(' AND ')})`;
  });
  return `(${groups.join(' OR ')})`;
}

/**
 * The WHERE conditions (joined with AND) for a filter over the features table aliased `f`; `tagsFromText` for rows
 * that are not all current (a read at a version), whose tags the tag index does not hold.
 */
export function compileFilter(filter: FeatureFilter, tagsFromText = false): SqlFragment {
  const clauses: string[] = [];
  const params: unknown[] = [];
  if (filter.tags && filter.tags.length > 0) clauses.push(compileTags(filter.tags, params, tagsFromText));
  for (const condition of filter.properties ?? []) clauses.push(compileCondition('f.json', condition, params));
  if (filter.where) clauses.push(compileExpression(filter.where, params, false));
  if (filter.sample !== undefined && filter.sample > 1) {
    params.push(filter.sample);
    clauses.push(`((f.seq * ${SAMPLE_HASH.multiplier}) % ${SAMPLE_HASH.modulus}) % ? = 0`);
  }
  return { sql: clauses.length > 0 ? clauses.join(' AND ') : '1', params };
}
