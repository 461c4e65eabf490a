// Compiles CQL2 arithmetic (`+ - * / % div ^`) and comparisons between properties into the hub's typed numeric expressions.
import { hubError } from '../../../core/errors.js';
import type { ArithmeticOperator, ComparisonOperator, FilterExpression, NumericExpression } from '../../../core/feature-query.js';

export const ARITHMETIC: readonly string[] = ['+', '-', '*', '/', '%', 'div', '^'];

/** What the filter compiler lends: a property's stored path (refusing geometry and arrays), and a count of expressions. */
export interface ArithmeticContext {
  propertyPath(reference: unknown): string[];
  /** Counts one more expression at this depth; throws past the filter's limits. */
  visit(depth: number): void;
}

const invalid = (problem: string) => hubError('ogcInvalidFilter', { problem });
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
export const isProperty = (value: unknown): value is { property: string } => isObject(value) && typeof value.property === 'string';
export const isArithmetic = (value: unknown): boolean => isObject(value) && typeof value.op === 'string' && ARITHMETIC.includes(value.op);

/**
 * The value of an operand made of literals alone, as the engines compute it (IEEE doubles; `^` may differ from the
 * engines' pow in the last bit, which cannot turn a finite result into an infinite one): a constant that is no finite
 * number (`1/0`, `10^400`, `(-8)^0.5`) is refused, as no feature could ever match it. Null when it holds a property.
 */
function constant(expression: NumericExpression): number | null {
  if (expression.kind === 'number') return expression.value;
  if (expression.kind === 'property') return null;
  const [a, b] = [constant(expression.left), constant(expression.right)];
  if (a === null || b === null) return null;
  const quotient = () => Math.trunc(a / b);
  const value = expression.op === '+' ? a + b : expression.op === '-' ? a - b : expression.op === '*' ? a * b
    : expression.op === '/' ? a / b : expression.op === 'div' ? quotient() : expression.op === '%' ? a - b * quotient() : a ** b;
  if (b === 0 && ['/', '%', 'div'].includes(expression.op)) throw invalid(`division by zero in ${expression.op === 'div' ? 'div' : expression.op}`);
  if (!Number.isFinite(value)) throw invalid(`an arithmetic expression of literals is not a finite number (${expression.op})`);
  return value;
}

export class ArithmeticCompiler {
  constructor(private readonly context: ArithmeticContext) {}

  /** A number, a numeric property or an arithmetic expression; strings, booleans, times and functions are 400s. */
  operand(value: unknown, depth: number): NumericExpression {
    this.context.visit(depth);
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) throw invalid('a number in a filter must be finite');
      return { kind: 'number', value };
    }
    if (isProperty(value)) return { kind: 'property', path: this.context.propertyPath(value) };
    if (isObject(value) && typeof value.op === 'string' && Array.isArray(value.args)) {
      if (!ARITHMETIC.includes(value.op)) throw invalid(`${JSON.stringify(value.op.toUpperCase().slice(0, 40))} is not supported in arithmetic`);
      if (value.args.length !== 2) throw invalid(`${value.op} takes 2 arguments, got ${value.args.length}`);
      const expression: NumericExpression = {
        kind: 'arithmetic', op: value.op as ArithmeticOperator, left: this.operand(value.args[0], depth + 1), right: this.operand(value.args[1], depth + 1),
      };
      constant(expression);
      return expression;
    }
    throw invalid(`arithmetic takes numbers and numeric properties, not ${JSON.stringify(value)?.slice(0, 40) ?? 'that'}`);
  }

  compare(op: ComparisonOperator, left: unknown, right: unknown, depth: number): FilterExpression {
    return { kind: 'numeric', op, left: this.operand(left, depth), right: this.operand(right, depth) };
  }
}
