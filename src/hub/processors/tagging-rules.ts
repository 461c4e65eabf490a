// The rule-tagger processor: tags the written features that a JSONPath over their FeatureCollection selects.
import { JSONPath } from 'jsonpath-plus';
import { isObject } from '../../core/json.js';
import { checkFilters, FilterScript } from './jsonpath-filters.js';

export interface TaggingRule { tag: string; path: string }

/** Rules per space stay small: each one runs over every written feature. */
export const MAX_TAGGING_RULES = 100;
export const MAX_RULE_LENGTH = 1000;

/**
 * What the rules see: the value with every array copied and frozen. Filters cannot call methods since they run
 * in FilterScript (jsonpath-filters.ts); before, jsonpath-plus's evaluator let them (`@.geometry.coordinates.reverse()`,
 * `@root.features.pop()`), and the frozen copies kept the written features and other rules' views from changing. They
 * stay as a second wall should a filter ever reach a method again. Objects holding no array are shared, not copied.
 */
export function ruleView(value: unknown): unknown {
  if (Array.isArray(value)) return Object.freeze(value.map(ruleView));
  if (!isObject(value)) return value;
  const keys = Object.keys(value);
  let copy: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const member = value[keys[i]];
    const view = ruleView(member);
    if (copy === undefined && view !== member) {
      copy = {};
      for (let j = 0; j < i; j++) setMember(copy, keys[j], value[keys[j]]);
    }
    if (copy !== undefined) setMember(copy, keys[i], view);
  }
  return copy ?? value;
}

/** A parsed body may hold an own `__proto__` member: in the copy it stays a member rather than setting the prototype. */
function setMember(object: Record<string, unknown>, key: string, member: unknown): void {
  if (key === '__proto__') Object.defineProperty(object, key, { value: member, enumerable: true, writable: true, configurable: true });
  else object[key] = member;
}

/**
 * jsonpath-plus keeps every path and filter text it has seen in `JSONPath.cache`, for the life of the
 * process; rule texts come from clients, so the hub starts that cache afresh after this many rule texts.
 */
export const CACHED_RULE_TEXTS = 1000;
const seenRuleTexts = new Set<string>();

function boundCache(path: string): void {
  if (seenRuleTexts.has(path)) return;
  if (seenRuleTexts.size >= CACHED_RULE_TEXTS) {
    seenRuleTexts.clear();
    JSONPath.cache = {};
  }
  seenRuleTexts.add(path);
}

/**
 * Which features (by index in `collection.features`, a `ruleView`) a rule selects: any match inside a feature selects it.
 * Filters run in FilterScript (jsonpath-filters.ts: members, comparisons and numbers only; no JavaScript `eval`, no
 * calls); a filter that fails on a feature (`@.properties.a.b` where `a` is missing), or that does not parse, does not
 * match it. A path jsonpath-plus fails on selects nothing: rules and filters are checked when they are given
 * (`checkFilters`), and one stored before a check was added must not fail a write or a delivery.
 */
export function selectedFeatures(rule: TaggingRule, collection: object): Set<number> {
  boundCache(rule.path);
  const selected = new Set<number>();
  let pointers: unknown;
  try {
    pointers = JSONPath({ path: rule.path, json: collection, resultType: 'pointer', eval: FilterScript, ignoreEvalErrors: true, wrap: true });
  } catch {
    return selected;
  }
  if (!Array.isArray(pointers)) return selected;
  for (const pointer of pointers) {
    const match = typeof pointer === 'string' ? /^\/features\/(\d+)(\/|$)/.exec(pointer) : null;
    if (match) selected.add(Number(match[1]));
  }
  return selected;
}

/** Validates `taggingRules` (tag → JSONPath text); throws an Error whose message says which rule is wrong. */
export function readTaggingRules(given: unknown): TaggingRule[] {
  if (!isObject(given)) throw new Error('it must be an object of tag → JSONPath');
  const entries = Object.entries(given);
  if (entries.length > MAX_TAGGING_RULES) throw new Error(`it holds ${entries.length} rules; at most ${MAX_TAGGING_RULES} are allowed`);
  return entries.map(([tag, path]) => {
    if (tag === '' || tag.includes('\u0000')) throw new Error(`the tag ${JSON.stringify(tag)} is empty or holds NUL`);
    if (typeof path !== 'string' || !path.startsWith('$') || path.length > MAX_RULE_LENGTH) {
      throw new Error(`the rule of ${JSON.stringify(tag)} must be a JSONPath text starting with $, at most ${MAX_RULE_LENGTH} characters`);
    }
    try {
      checkFilters(path);
    } catch (error) {
      throw new Error(`the rule of ${JSON.stringify(tag)} is not a JSONPath that parses: ${error instanceof Error ? error.message : String(error)}`);
    }
    return { tag, path };
  });
}
