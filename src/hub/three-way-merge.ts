// Three-way merge of JSON values from a common base (ADR 002, "Merges"): a change on one side is taken, the same change on both is kept, different changes on both are a conflict.
import { isObject } from '../core/json.js';
import { deepEqual } from './merge-patch.js';

/** How a member both sides changed differently is decided (`cr`, API.md 4.4): refused, HEAD's value kept, or the written one taken. */
export type ConflictRule = 'error' | 'retain' | 'replace';

/** The conflicts of a merge: the paths of the members both sides changed differently, as `properties.a.b`. */
export type Conflicts = string[];

const own = (object: Record<string, unknown>, key: string): unknown => (Object.hasOwn(object, key) ? object[key] : undefined);

/**
 * `undefined` stands for an absent member. Two objects that both sides changed merge member by member (`deep`), so
 * that edits of different members of a nested object both apply, as the patch walk of API.md 4.4 recurses into
 * objects; anything else (scalars, arrays, a type change, a geometry) is one value.
 */
export function mergeValues(base: unknown, head: unknown, written: unknown, path: string, rule: ConflictRule, conflicts: Conflicts,
  deep = true): unknown {
  if (deepEqual(head, written) || deepEqual(base, written)) return head;
  if (deepEqual(base, head)) return written;
  if (deep && isObject(head) && isObject(written)) return mergeObjects(isObject(base) ? base : {}, head, written, path, rule, conflicts);
  if (rule === 'retain') return head;
  if (rule === 'replace') return written;
  conflicts.push(path);
  return head;
}

/** The members of three objects merged; HEAD's order first, then the members only the written side has. */
export function mergeObjects(base: Record<string, unknown>, head: Record<string, unknown>, written: Record<string, unknown>, path: string,
  rule: ConflictRule, conflicts: Conflicts): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const key of new Set([...Object.keys(head), ...Object.keys(written), ...Object.keys(base)])) {
    const value = mergeValues(own(base, key), own(head, key), own(written, key), path === '' ? key : `${path}.${key}`, rule, conflicts);
    // Plain assignment would turn a member named `__proto__` into the object's prototype.
    if (value !== undefined) Object.defineProperty(merged, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return merged;
}
