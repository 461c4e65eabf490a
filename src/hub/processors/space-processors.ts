// Turns a space definition's processors into what runs on each write, compiled once per definition.
import { type HubError, hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import { normalizeTag } from '../tags.js';
import { compileSchema, type FeatureValidator } from './schema-validation.js';
import { readTaggingRules, ruleView, selectedFeatures, type TaggingRule } from './tagging-rules.js';

const SCHEMA_VALIDATOR = 'schema-validator';
const RULE_TAGGER = 'rule-tagger';

export interface SpaceProcessors {
  rules: TaggingRule[];
  validators: FeatureValidator[];
}

/** One written feature as the tagging rules see it (as given), and the tags they add to it. */
export interface ProcessedFeature {
  feature: Record<string, unknown>;
  ruleTags: string[];
}

const NONE: SpaceProcessors = { rules: [], validators: [] };

function configs(processors: Record<string, unknown>, id: string): Array<{ where: string; params: unknown }> {
  const list = processors[id];
  if (!Array.isArray(list)) return [];
  return list.map((config, index) => ({ where: `processors.${id}[${index}].params`, params: isObject(config) ? config.params : undefined }));
}

function refused(where: string, problem: string): never {
  throw hubError('spaceValidation', { problem: `The property '${where}' is invalid: ${problem}.` });
}

/**
 * The processors of a definition's `processors` map; an invalid configuration is a 400 spaceValidation naming it.
 * `given` when a client sends them (a schema is refused where it would not be checked), not when they are stored.
 */
export function compileProcessors(processors: unknown, given = false): SpaceProcessors {
  if (!isObject(processors)) return NONE;
  const compiled: SpaceProcessors = { rules: [], validators: [] };
  for (const { where, params } of configs(processors, RULE_TAGGER)) {
    try {
      compiled.rules.push(...readTaggingRules(isObject(params) ? params.taggingRules : undefined));
    } catch (error) {
      refused(`${where}.taggingRules`, (error as Error).message);
    }
  }
  for (const { where, params } of configs(processors, SCHEMA_VALIDATOR)) {
    try {
      compiled.validators.push(compileSchema(isObject(params) ? params.schema : undefined, { refuseUnchecked: given }));
    } catch (error) {
      refused(`${where}.schema`, (error as Error).message);
    }
  }
  return compiled;
}

/** Spaces whose compiled processors are kept; the oldest is dropped beyond this. */
const CACHED_SPACES = 1000;

/**
 * Compiled processors per space, valid while the stored processors are the same text: a schema is compiled once
 * per definition, not per request. The text, not the definition's `updatedAt`: two changes within one millisecond
 * (through two worker processes, or two nodes) have the same time but not the same processors.
 */
export class ProcessorCache {
  private readonly compiled = new Map<string, { version: string; processors: SpaceProcessors }>();

  get(spaceId: string, definition: SpaceDefinition): SpaceProcessors {
    if (!isObject(definition.processors)) return NONE;
    const version = JSON.stringify(definition.processors);
    const cached = this.compiled.get(spaceId);
    if (cached?.version === version) return cached.processors;
    const processors = compileProcessors(definition.processors);
    this.compiled.delete(spaceId);
    if (this.compiled.size >= CACHED_SPACES) this.compiled.delete(this.compiled.keys().next().value as string);
    this.compiled.set(spaceId, { version, processors });
    return processors;
  }
}

/**
 * Tagging rules over a FeatureCollection of the written features as given (so the work is bounded by the
 * write), copied with frozen arrays so that no rule changes them; the tags they add go to `ruleTags`, which the write
 * plan applies last, after addTags/removeTags.
 */
export function runTaggingRules(processors: SpaceProcessors, features: ProcessedFeature[]): void {
  if (features.length === 0 || processors.rules.length === 0) return;
  const collection = { type: 'FeatureCollection', features: Object.freeze(features.map((item) => ruleView(item.feature))) };
  for (const rule of processors.rules) {
    const tag = normalizeTag(rule.tag);
    for (const index of selectedFeatures(rule, collection)) {
      const item = features[index];
      if (item && !item.ruleTags.includes(tag)) item.ruleTags.push(tag);
    }
  }
}

/** The refusal of one feature, as it will be stored, by the first schema it fails; undefined when it passes them all. */
export function schemaRefusal(processors: SpaceProcessors, feature: Record<string, unknown>, position: number, id: string): HubError | undefined {
  for (const validate of processors.validators) {
    const problem = validate(feature);
    if (problem !== undefined) return hubError('schemaValidationFailed', { position, id, problem });
  }
  return undefined;
}
