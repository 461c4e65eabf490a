// The rule-tagger processor: tags the written features that a JSONPath over their FeatureCollection selects.
import { JSONPath } from 'jsonpath-plus';
import { isObject } from '../../core/json.js';

export interface TaggingRule { tag: string; path: string }

/** Rules per space stay small: each one runs over every written feature. */
export const MAX_TAGGING_RULES = 100;
export const MAX_RULE_LENGTH = 1000;

/** The FeatureCollection wrapping a probe feature: how a rule is tried once when the space is defined. */
const PROBE = { type: 'FeatureCollection', features: [{ type: 'Feature', id: 'probe', geometry: null, properties: {} }] };

/**
 * Which features (by index in `collection.features`) a rule selects: any match inside a feature selects it.
 * Filters run in jsonpath-plus's own safe evaluator (no JavaScript `eval`); a filter that fails on a feature
 * (`@.properties.a.b` where `a` is missing) does not match it. A path or filter that does not parse throws.
 */
export function selectedFeatures(rule: TaggingRule, collection: object): Set<number> {
  const pointers = JSONPath({ path: rule.path, json: collection, resultType: 'pointer', eval: 'safe', ignoreEvalErrors: true, wrap: true }) as unknown;
  const selected = new Set<number>();
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
    const rule = { tag, path };
    try {
      selectedFeatures(rule, PROBE);
    } catch (error) {
      throw new Error(`the rule of ${JSON.stringify(tag)} is not a JSONPath that parses: ${error instanceof Error ? error.message : String(error)}`);
    }
    return rule;
  });
}
