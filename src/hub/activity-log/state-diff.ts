// The diff between two states of a feature as the activity log keeps it: a feature PATCH body (API.md 4.4) turning one into the other.
import { isObject } from '../../core/json.js';
import type { FeatureParts } from '../feature-text.js';
import { NS } from '../namespace.js';
import { deepEqual } from '../merge-patch.js';

/** What of a state a diff compares: geometry, user properties, tags (where a PATCH body gives them) and foreign members. */
function comparable(state: FeatureParts): Record<string, unknown> {
  return { ...state.extra, geometry: state.geometry, properties: { ...state.properties, [NS]: { tags: state.namespace.tags } } };
}

/**
 * The members of `after` that differ from `before`, recursing into objects present on both sides; a
 * member `before` has and `after` lacks is `null` (removed). Arrays and scalars are given whole. Written
 * with Object.fromEntries so that a member named `__proto__` stays a member.
 */
function difference(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const entries: Array<[string, unknown]> = [];
  for (const key of Object.keys(before)) if (!Object.hasOwn(after, key)) entries.push([key, null]);
  for (const [key, value] of Object.entries(after)) {
    const old = Object.hasOwn(before, key) ? before[key] : undefined;
    if (old !== undefined && deepEqual(old, value)) continue;
    entries.push([key, isObject(old) && isObject(value) ? difference(old, value) : value]);
  }
  return Object.fromEntries(entries);
}

/** The diff from `before` (absent for an insert: the diff then holds the whole state) to `after`. */
export function stateDiff(before: FeatureParts | undefined, after: FeatureParts): Record<string, unknown> {
  return difference(before ? comparable(before) : {}, comparable(after));
}
