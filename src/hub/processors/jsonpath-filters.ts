// The filter expressions of client JSONPath texts (tagging rules, subscription filters): reading and comparing values only, no calls and no regular expressions.
import jsep from 'jsep';
import { JSONPath } from 'jsonpath-plus';

/**
 * jsonpath-plus's own "safe" evaluator lets a filter call any method of the values it reaches and write regular
 * expression literals: `@.name.match(/^(a+)+$/)` on a 40-character name blocks the node's event loop for hours, and
 * `@.name.padStart(5e8)` allocates a gigabyte, from one rule or subscription of any account. Filters here may only
 * read members of the features, compare them, combine the results and compute with numbers, which costs at most a
 * few steps per character of the filter text. This jsep is the package's own, not the copy bundled in jsonpath-plus:
 * without the regex plugin, a regular expression does not parse.
 */
jsep.addUnaryOp('typeof');
jsep.addLiteral('undefined', undefined);
/** In the texts as clients write them (`@.a`, `@root`, `@parent`), checked when a rule is defined. */
jsep.addIdentifierChar('@');

/** Loose equality as JavaScript (and jsonpath-plus) compares: filters written for it keep matching. */
const COMPARE: Record<string, (a: unknown, b: unknown) => boolean> = {
  '==': (a, b) => a == b,
  '!=': (a, b) => a != b,
  '===': (a, b) => a === b,
  '!==': (a, b) => a !== b,
  '<': (a, b) => (a as number) < (b as number),
  '>': (a, b) => (a as number) > (b as number),
  '<=': (a, b) => (a as number) <= (b as number),
  '>=': (a, b) => (a as number) >= (b as number),
};

/** Arithmetic on numbers only: `+` on strings would let a short text build long ones from a feature's values. */
const ARITHMETIC: Record<string, (a: number, b: number) => number> = {
  '+': (a, b) => a + b, '-': (a, b) => a - b, '*': (a, b) => a * b, '/': (a, b) => a / b, '%': (a, b) => a % b,
  '|': (a, b) => a | b, '^': (a, b) => a ^ b, '&': (a, b) => a & b, '<<': (a, b) => a << b, '>>': (a, b) => a >> b, '>>>': (a, b) => a >>> b,
};

const UNARY: Record<string, (a: unknown) => unknown> = {
  '!': (a) => !a,
  '-': (a) => -number(a),
  '+': (a) => +number(a),
  '~': (a) => ~number(a),
  typeof: (a) => typeof a,
};

function number(value: unknown): number {
  if (typeof value !== 'number') throw new TypeError('arithmetic is on numbers only');
  return value;
}

/** Throws, naming what the filter may not hold; the expression as parsed otherwise. */
function checked(node: jsep.Expression): jsep.Expression {
  switch (node.type) {
    case 'Literal':
      // jsep's plugins register on the package for the whole process: should any module add the regex plugin, a
      // regular expression would parse, and is still refused here.
      if ((node as jsep.Literal).value instanceof RegExp) break;
      return node;
    case 'Identifier':
      return node;
    case 'MemberExpression': {
      const member = node as jsep.MemberExpression;
      checked(member.object);
      if (member.computed) checked(member.property);
      return node;
    }
    case 'BinaryExpression':
    case 'LogicalExpression': {
      const binary = node as jsep.BinaryExpression;
      if (!(binary.operator in COMPARE || binary.operator in ARITHMETIC || binary.operator === '&&' || binary.operator === '||')) {
        throw new SyntaxError(`the operator ${binary.operator} is not supported in a filter`);
      }
      checked(binary.left);
      checked(binary.right);
      return node;
    }
    case 'UnaryExpression': {
      const unary = node as jsep.UnaryExpression;
      if (!(unary.operator in UNARY)) throw new SyntaxError(`the operator ${unary.operator} is not supported in a filter`);
      checked(unary.argument);
      return node;
    }
    case 'ConditionalExpression': {
      const conditional = node as jsep.ConditionalExpression;
      checked(conditional.test);
      checked(conditional.consequent);
      checked(conditional.alternate);
      return node;
    }
    case 'CallExpression':
      throw new SyntaxError('it calls a method or function');
    default:
      break;
  }
  throw new SyntaxError(`${node.type === 'Literal' ? 'a regular expression' : node.type} is not supported`);
}

/** A member of a feature's own data: inherited members (methods, prototypes) are not there. */
function member(object: unknown, name: unknown, optional: boolean): unknown {
  if (object === undefined || object === null) {
    if (optional) return undefined;
    throw new TypeError(`cannot read ${String(name)} of ${String(object)}`);
  }
  const key = String(name);
  return Object.hasOwn(Object(object), key) ? (object as Record<string, unknown>)[key] : undefined;
}

function evaluate(node: jsep.Expression, context: Record<string, unknown>): unknown {
  switch (node.type) {
    case 'Literal':
      return (node as jsep.Literal).value;
    case 'Identifier': {
      const { name } = node as jsep.Identifier;
      if (!Object.hasOwn(context, name)) throw new ReferenceError(`${name} is not defined`);
      return context[name];
    }
    case 'MemberExpression': {
      const access = node as jsep.MemberExpression;
      const object = evaluate(access.object, context);
      const name = access.computed ? evaluate(access.property, context) : (access.property as jsep.Identifier).name;
      return member(object, name, access.optional === true);
    }
    case 'BinaryExpression':
    case 'LogicalExpression': {
      const { operator, left, right } = node as jsep.BinaryExpression;
      const a = evaluate(left, context);
      if (operator === '&&') return a && evaluate(right, context);
      if (operator === '||') return a || evaluate(right, context);
      const b = evaluate(right, context);
      return operator in COMPARE ? COMPARE[operator](a, b) : ARITHMETIC[operator](number(a), number(b));
    }
    case 'UnaryExpression': {
      const { operator, argument } = node as jsep.UnaryExpression;
      return UNARY[operator](evaluate(argument, context));
    }
    case 'ConditionalExpression': {
      const { test, consequent, alternate } = node as jsep.ConditionalExpression;
      return evaluate(test, context) ? evaluate(consequent, context) : evaluate(alternate, context);
    }
    default:
      throw new SyntaxError(`${node.type} is not supported in a filter`);
  }
}

/**
 * The `eval` class jsonpath-plus runs filters with. A text that does not parse or holds what filters may not is
 * remembered, not thrown: jsonpath-plus constructs scripts outside its error handling, so a throw here would fail
 * the write or the delivery; thrown when run, it makes the filter match nothing (`ignoreEvalErrors`). New rules
 * and filters are refused before that by `checkFilters`; this is for those stored before it.
 */
export class FilterScript {
  private readonly expression: jsep.Expression | Error;

  constructor(code: string) {
    try {
      this.expression = checked(jsep(code));
    } catch (error) {
      this.expression = error instanceof Error ? error : new Error(String(error));
    }
  }

  runInNewContext(context: object): unknown {
    if (this.expression instanceof Error) throw this.expression;
    return evaluate(this.expression, context as Record<string, unknown>);
  }
}

/**
 * Throws, naming the first filter (`[?(…)]`) of a JSONPath text that does not parse or holds what filters may not:
 * every one of them, also those the features a rule is first tried on would never reach. Scripts (`[(…)]`) are
 * refused: jsonpath-plus fails the whole path (a TypeError) when one fails on a feature.
 */
export function checkFilters(path: string): void {
  for (const segment of JSONPath.toPathArray(path)) {
    if (segment.startsWith('(')) throw new SyntaxError(`the script ${segment.slice(0, 80)} is not supported: select with a filter [?(…)]`);
    if (!segment.startsWith('?(')) continue;
    // The filter's text as jsonpath-plus takes it from the segment.
    const filter = segment.replace(/^\?\((.*?)\)$/u, '$1');
    try {
      checked(jsep(filter));
    } catch (error) {
      const problem = error instanceof Error ? error.message : String(error);
      throw new SyntaxError(`the filter ${segment.slice(0, 60)} is not supported: filters cannot call methods or hold regular expressions; they read members, compare them and compute with numbers (${problem.slice(0, 100)})`);
    }
  }
}
