// Compiles a CQL2 filter (its CQL2-JSON tree, which the text parser also builds) into the hub's typed query objects.
import { hubError } from '../../../core/errors.js';
import type { ComparisonOperator, FilterExpression, JsonScalar, PropertyOperator } from '../../../core/feature-query.js';
import type { SpatialFilter, SpatialRelation } from '../../../geo/spatial-filter.js';
import { type BBox, geometryBBox } from '../../../geo/bbox.js';
import type { Geometry } from '../../../geo/geometry.js';
import { validateGeometry } from '../../../geo/geometry-validation.js';
import { boxPolygon } from '../../../geo/spatial-predicate.js';
import { areaOf } from '../ogc-area.js';
import { ArithmeticCompiler, isArithmetic, isProperty } from './cql2-arithmetic.js';
import { type FoldedOperand, foldedOperand, isFold } from './cql2-folds.js';
import { TEMPORAL, temporalFunction, timeComparison } from './cql2-time.js';

/** A property a filter may name: where it lies in the stored feature and what it holds. */
export interface FilterTarget {
  name: string;
  path: string[];
  /** `time`: milliseconds since 1970 (createdAt, updatedAt), compared with TIMESTAMP and DATE literals. */
  kind: 'value' | 'time' | 'geometry';
  /** The JSON Schema type the queryables tell, when known. */
  type?: string;
}

/** The parts of a read a filter sets: a boolean expression over properties and at most one spatial condition. */
export interface CompiledFilter {
  where?: FilterExpression;
  spatial?: SpatialFilter;
}

/** A filter deeper or larger than this is refused: it would only make a long statement, or a deep recursion. */
const MAX_DEPTH = 64;
const MAX_NODES = 1000;

const COMPARISONS: Record<string, { op: ComparisonOperator; flipped: ComparisonOperator }> = {
  '=': { op: 'eq', flipped: 'eq' },
  '<>': { op: 'ne', flipped: 'ne' },
  '<': { op: 'lt', flipped: 'gt' },
  '<=': { op: 'lte', flipped: 'gte' },
  '>': { op: 'gt', flipped: 'lt' },
  '>=': { op: 'gte', flipped: 'lte' },
};

const SPATIAL = ['s_intersects', 's_equals', 's_disjoint', 's_touches', 's_within', 's_overlaps', 's_crosses', 's_contains'];

/** Each spatial function's relation of the geometry to the literal; S_INTERSECTS has none (the read's plain area). */
const RELATIONS: Record<string, SpatialRelation | undefined> = {
  s_intersects: undefined, s_equals: 'equals', s_disjoint: 'disjoint', s_touches: 'touches', s_within: 'within', s_overlaps: 'overlaps',
  s_crosses: 'crosses', s_contains: 'contains',
};

const WORLD: BBox = [-180, -90, 180, 90];

interface Node {
  op: string;
  args: unknown[];
}

const invalid = (problem: string) => hubError('ogcInvalidFilter', { problem });
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isNode = (value: unknown): value is Node => isObject(value) && typeof value.op === 'string' && Array.isArray(value.args);
const shown = (text: string) => JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
const and = (items: FilterExpression[]): FilterExpression => (items.length === 1 ? items[0] : { kind: 'and', items });
const condition = (path: string[], op: PropertyOperator, values: JsonScalar[]): FilterExpression => ({ kind: 'condition', condition: { path, op, values } });

function node(value: unknown, arity?: number): Node {
  if (!isNode(value)) throw invalid('each expression must be an object with "op" and "args"');
  if (arity !== undefined && value.args.length !== arity) throw invalid(`${value.op} takes ${arity} argument${arity === 1 ? '' : 's'}, got ${value.args.length}`);
  return value;
}

class Compiler {
  private nodes = 0;
  private readonly targets: Map<string, FilterTarget>;
  private readonly arithmetic = new ArithmeticCompiler({
    propertyPath: (reference) => this.value(reference).path,
    visit: (depth) => this.visit(depth),
  });

  constructor(targets: readonly FilterTarget[]) {
    this.targets = new Map(targets.map((target) => [target.name, target]));
  }

  private visit(depth: number): void {
    if (++this.nodes > MAX_NODES) throw invalid(`a filter may hold at most ${MAX_NODES} expressions`);
    if (depth > MAX_DEPTH) throw invalid(`a filter may nest at most ${MAX_DEPTH} levels deep`);
  }

  compile(tree: unknown): CompiledFilter {
    const terms = isNode(tree) && tree.op === 'and' ? tree.args : [tree];
    const spatial = terms.filter((term) => isNode(term) && SPATIAL.includes(term.op));
    if (spatial.length > 1) throw invalid('at most one spatial function may stand in the filter');
    const rest = terms.filter((term) => !spatial.includes(term)).map((term) => this.expression(term, 1));
    return {
      ...(rest.length > 0 ? { where: and(rest) } : {}),
      ...(spatial.length === 1 ? { spatial: this.spatial(node(spatial[0], 2)) } : {}),
    };
  }

  private target(value: unknown): FilterTarget {
    if (!isObject(value) || typeof value.property !== 'string') throw invalid('one side of each comparison must be a property');
    const target = this.targets.get(value.property);
    if (!target) throw hubError('ogcUnknownQueryable', { name: shown(value.property) });
    return target;
  }

  private expression(value: unknown, depth: number): FilterExpression {
    this.visit(depth);
    if (value === true) return { kind: 'and', items: [] };
    if (value === false) return { kind: 'or', items: [] };
    const { op, args } = node(value);
    switch (op) {
      case 'and':
      case 'or':
        if (args.length < 2) throw invalid(`${op} takes at least 2 arguments`);
        return { kind: op, items: args.map((arg) => this.expression(arg, depth + 1)) };
      case 'not':
        return { kind: 'not', item: this.expression(node(value, 1).args[0], depth + 1) };
      case 'isNull':
        return condition(this.target(node(value, 1).args[0]).path, 'eq', [null]);
      case 'like':
        return this.like(node(value, 2));
      case 'between':
        return this.between(node(value, 3), depth);
      case 'in':
        return this.in(node(value, 2), depth);
      default:
        if (Object.hasOwn(COMPARISONS, op)) return this.comparison(node(value, 2), depth);
        if (TEMPORAL.includes(op)) return this.temporal(node(value, 2));
        if (SPATIAL.includes(op)) throw invalid(`${op.toUpperCase()} may only stand as the whole filter or as one term of its top-level AND`);
        throw invalid(`${shown(op.toUpperCase())} is not supported (see the conformance classes)`);
    }
  }

  private value(arg: unknown): FilterTarget {
    const target = this.target(arg);
    if (target.kind === 'geometry') throw invalid(`${target.name} can only be tested with the spatial functions and IS NULL`);
    if (target.type === 'array') throw invalid(`${target.name} is an array, which comparisons, LIKE, BETWEEN and IN do not take`);
    return target;
  }

  private comparison({ op, args }: Node, depth: number): FilterExpression {
    if (args.every(isProperty)) return this.properties(COMPARISONS[op].op, args[0], args[1]);
    if (args.some(isArithmetic)) return this.arithmetic.compare(COMPARISONS[op].op, args[0], args[1], depth + 1);
    if (args.some(isFold)) return this.folded(COMPARISONS[op], args[0], args[1]);
    const call = args.find(isNode);
    if (call) throw invalid(`${shown(call.op)} is not supported in a comparison: compare a property with a literal`);
    const propertyFirst = isObject(args[0]) && 'property' in args[0];
    const target = this.value(propertyFirst ? args[0] : args[1]);
    const literal = propertyFirst ? args[1] : args[0];
    const operator = propertyFirst ? COMPARISONS[op].op : COMPARISONS[op].flipped;
    if (target.kind === 'time') return timeComparison(target, operator, literal);
    // GDAL (3.6) sends a boolean field's value as 1 or 0: on a boolean queryable those mean true and false.
    if (target.type === 'boolean' && (literal === 1 || literal === 0)) return condition(target.path, operator, [literal === 1]);
    return condition(target.path, operator, [this.scalar(literal)]);
  }

  /** Two properties of the same JSON type compare as such (times as their milliseconds); any other pair is unknown. */
  private properties(op: ComparisonOperator, left: unknown, right: unknown): FilterExpression {
    return { kind: 'properties', op, left: this.value(left).path, right: this.value(right).path };
  }

  private temporal({ op, args }: Node): FilterExpression {
    const propertyFirst = isObject(args[0]) && 'property' in args[0];
    const target = this.target(propertyFirst ? args[0] : args[1]);
    if (target.kind !== 'time') throw invalid(`${op.toUpperCase()} compares createdAt or updatedAt, not ${target.name}`);
    return temporalFunction(op, target, propertyFirst ? args[1] : args[0], propertyFirst);
  }

  private scalar(literal: unknown): JsonScalar {
    if (typeof literal === 'string' || typeof literal === 'boolean') return literal;
    if (typeof literal === 'number' && Number.isFinite(literal)) return literal;
    if (isNode(literal)) throw invalid(`${shown(literal.op)} is not supported on either side of a comparison: compare a property with a literal`);
    throw invalid('the literal of a comparison must be a string, a number or a boolean');
  }

  private fold(value: unknown): FoldedOperand {
    return foldedOperand(value, (reference) => this.value(reference).path);
  }

  /** A comparison with CASEI or ACCENTI: a folded property with a literal folded alike by the hub (either side). */
  private folded(operator: { op: ComparisonOperator; flipped: ComparisonOperator }, left: unknown, right: unknown): FilterExpression {
    const [a, b] = [this.fold(left), this.fold(right)];
    if ('path' in a && 'literal' in b) return { kind: 'text', op: operator.op, path: a.path, folds: a.folds, value: b.literal };
    if ('literal' in a && 'path' in b) return { kind: 'text', op: operator.flipped, path: b.path, folds: b.folds, value: a.literal };
    throw invalid('CASEI and ACCENTI compare a property with a string literal');
  }

  private like({ args }: Node): FilterExpression {
    const subject = isFold(args[0]) ? this.fold(args[0]) : { path: this.value(args[0]).path, folds: [] };
    const pattern = isFold(args[1]) ? this.fold(args[1]) : args[1];
    if (!('path' in subject)) throw invalid('LIKE tests a property');
    const text = typeof pattern === 'string' ? pattern : isObject(pattern) && 'literal' in pattern ? pattern.literal : undefined;
    if (typeof text !== 'string') throw invalid('LIKE takes a string pattern');
    if (/(^|[^\\])(\\\\)*\\$/u.test(text)) throw invalid('a LIKE pattern may not end with a lone escape character (\\)');
    return { kind: 'like', path: subject.path, pattern: text, ...(subject.folds.length > 0 ? { folds: subject.folds } : {}) };
  }

  /** With arithmetic or properties for bounds, BETWEEN is the two numeric comparisons. */
  private between({ args }: Node, depth: number): FilterExpression {
    if (args.some(isArithmetic) || args.slice(1).some(isProperty)) {
      return and([this.arithmetic.compare('gte', args[0], args[1], depth + 1), this.arithmetic.compare('lte', args[0], args[2], depth + 1)]);
    }
    const target = this.value(args[0]);
    const [low, high] = [args[1], args[2]].map((bound) => {
      if (typeof bound !== 'number' || !Number.isFinite(bound)) throw invalid('BETWEEN takes numbers');
      return bound;
    });
    return and([condition(target.path, 'gte', [low]), condition(target.path, 'lte', [high])]);
  }

  /** With arithmetic in the subject or the list, IN is the OR of numeric equalities. */
  private in({ args }: Node, depth: number): FilterExpression {
    const list = args[1];
    if (!Array.isArray(list) || list.length === 0) throw invalid('IN takes a list of at least one literal');
    if (list.length > MAX_NODES) throw invalid(`an IN list may hold at most ${MAX_NODES} literals`);
    if (isFold(args[0])) {
      const items = list.map((item) => this.folded(COMPARISONS['='], args[0], item));
      return items.length === 1 ? items[0] : { kind: 'or', items };
    }
    if ([args[0], ...list].some(isArithmetic)) {
      const items = list.map((item) => this.arithmetic.compare('eq', args[0], item, depth + 1));
      return items.length === 1 ? items[0] : { kind: 'or', items };
    }
    const target = this.value(args[0]);
    return condition(target.path, 'eq', list.map((literal) => this.scalar(literal)));
  }

  /**
   * A spatial function of the geometry and a literal, either way round: `S_WITHIN(literal, geometry)` is the geometry
   * containing the literal. S_INTERSECTS is the read's own area filter (a box keeps the box plan); the others are relations.
   */
  private spatial({ op, args }: Node): SpatialFilter {
    const name = op.toUpperCase();
    const propertyFirst = isObject(args[0]) && 'property' in args[0];
    const target = this.target(propertyFirst ? args[0] : args[1]);
    if (target.kind !== 'geometry') throw invalid(`${name} tests the geometry, not ${target.name}`);
    const literal = propertyFirst ? args[1] : args[0];
    const relation = RELATIONS[op];
    const turned = propertyFirst ? relation : relation === 'within' ? 'contains' : relation === 'contains' ? 'within' : relation;
    if (isObject(literal) && 'bbox' in literal) {
      const area = areaOf(this.box(literal.bbox));
      if (turned === undefined) return area;
      return this.related(area.kind === 'box' ? boxPolygon(area.box) : area.geometry, turned);
    }
    if (!isObject(literal) || typeof literal.type !== 'string') throw invalid(`${name} takes the geometry property and a geometry literal`);
    const problem = validateGeometry(literal);
    if (problem !== null) throw invalid(`the geometry of ${name}: ${problem}`);
    return this.related(literal as unknown as Geometry, turned);
  }

  /** Any match of a relation but disjoint lies in the bounds of the literal; a disjoint one anywhere. */
  private related(geometry: Geometry, relation: SpatialRelation | undefined): SpatialFilter {
    const bounds = relation === 'disjoint' ? WORLD : geometryBBox(geometry) ?? [0, 0, 0, 0];
    return { kind: 'geometry', geometry, bounds, ...(relation ? { relation } : {}) };
  }

  private box(value: unknown): BBox {
    const numbers = Array.isArray(value) && value.every((n) => typeof n === 'number' && Number.isFinite(n)) ? value as number[] : [];
    if (numbers.length !== 4 && numbers.length !== 6) throw invalid('BBOX takes 4 numbers (or 6 with heights)');
    const [west, south, east, north] = numbers.length === 4 ? numbers : [numbers[0], numbers[1], numbers[3], numbers[4]];
    if ([west, east].some((x) => Math.abs(x) > 180) || [south, north].some((y) => Math.abs(y) > 90) || south > north) {
      throw invalid('BBOX must be west, south, east, north in degrees, with south ≤ north');
    }
    return [west, south, east, north];
  }
}

/** The typed query of a filter; unknown properties, unsupported functions and malformed trees are 400s. */
export function compileCql2(tree: unknown, targets: readonly FilterTarget[]): CompiledFilter {
  return new Compiler(targets).compile(tree);
}
