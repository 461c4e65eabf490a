// The event stream's filters (?tags=, p.*, a bbox) tested in memory on a changed feature's parsed states, as the engines test them in SQL (storage/sqlite/filter-sql.ts).
import { hubError } from '../../core/errors.js';
import type { FeatureFilter, JsonScalar, PropertyCondition, TagExpression } from '../../core/feature-query.js';
import { jsonContainment } from '../../core/json-containment.js';
import type { BBox } from '../../geo/bbox.js';
import type { Geometry } from '../../geo/geometry.js';
import { spatialPredicate } from '../../geo/spatial-predicate.js';

/** What an event stream is narrowed to: features matching it before or after their change. */
export interface EventFilter extends Pick<FeatureFilter, 'tags' | 'properties'> {
  /** Any two opposite corners, as /bbox takes them (API.md 6.1). */
  corners?: BBox;
}

type Json = unknown;
export type FeatureMatcher = (featureText: string) => boolean;

function memberAt(root: Json, path: readonly string[]): Json | undefined {
  let value = root;
  for (const key of path) {
    // Own members only: `key in value` found `constructor` or `toString` in every feature, so `p.constructor!=x` matched all.
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, key)) return undefined;
    value = (value as Record<string, Json>)[key];
  }
  return value;
}

const sameType = (a: Json, b: JsonScalar): boolean => typeof a === typeof b && a !== null;

function valueMatches(condition: PropertyCondition, found: Json | undefined, value: JsonScalar | object): boolean {
  if (condition.op === 'contains') return Array.isArray(found) && jsonContainment(found, [value]);
  if (value === null) return condition.op === 'ne' ? found !== undefined && found !== null : found === undefined || found === null;
  if (typeof value === 'object') throw hubError('invalidPropertyFilter', { filter: condition.path.join('.'), problem: 'only =cs= accepts object or array values' });
  // "Not equal" also holds for a present value of another JSON type (jsonb semantics); a missing one never matches.
  if (condition.op === 'ne') return found !== undefined && !(sameType(found, value) && found === value);
  if (!sameType(found, value)) return false;
  const a = found as string | number | boolean;
  switch (condition.op) {
    case 'eq': return a === value;
    case 'gt': return a > value;
    case 'gte': return a >= value;
    case 'lt': return a < value;
    case 'lte': return a <= value;
  }
}

function tagsMatch(tags: TagExpression, feature: Json): boolean {
  const held = memberAt(feature, ['properties', '@ns:com:here:xyz', 'tags']);
  const list = Array.isArray(held) ? held : [];
  return tags.some((group) => group.every((tag) => list.includes(tag)));
}

/** The test of one stored feature text; undefined when the filter keeps everything. Bad filters fail here, before the stream starts. */
export function featureMatcher(filter: EventFilter): FeatureMatcher | undefined {
  const { tags = [], properties = [], corners } = filter;
  for (const condition of properties) {
    for (const value of condition.values) {
      if (condition.op !== 'contains' && value !== null && typeof value === 'object') {
        throw hubError('invalidPropertyFilter', { filter: condition.path.join('.'), problem: 'only =cs= accepts object or array values' });
      }
    }
  }
  if (tags.length === 0 && properties.length === 0 && !corners) return undefined;
  const inBox = corners && spatialPredicate({
    kind: 'box', box: [Math.min(corners[0], corners[2]), Math.min(corners[1], corners[3]), Math.max(corners[0], corners[2]), Math.max(corners[1], corners[3])],
  });
  return (text) => {
    const feature = JSON.parse(text) as { geometry?: Geometry | null };
    if (tags.length > 0 && !tagsMatch(tags, feature)) return false;
    if (!properties.every((condition) => condition.values.some((value) => valueMatches(condition, memberAt(feature, condition.path), value)))) return false;
    return !inBox || (!!feature.geometry && inBox(feature.geometry));
  };
}
