// The JSON patch walk of API.md 4.4 (feature PATCH, POST e=patch) and 3.4 (space PATCH), plus deep JSON equality.
import { isObject } from '../core/json.js';

export interface PatchResult {
  result: Record<string, unknown>;
  /** False when the patched object is deep-equal to the stored one: the write is reported, not made. */
  changed: boolean;
}

/**
 * Walks `input` against `stored`: `null` removes a member, a member missing in stored is inserted
 * as given (nested `null`s included, no recursion into it), two objects recurse, anything else
 * (scalars, arrays, a type change) replaces. Members `input` does not mention stay. The result
 * is a fresh deep copy, so callers may change it without touching `stored` or `input`.
 */
export function applyPatch(stored: Record<string, unknown>, input: Record<string, unknown>): PatchResult {
  const result = structuredClone(stored);
  patchInPlace(result, input);
  return { result, changed: !deepEqual(result, stored) };
}

/** Deep equality of JSON values; object member order does not matter, array order does. */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length
    && keys.every((key) => Object.hasOwn(b, key) && deepEqual(a[key], b[key]));
}

function patchInPlace(target: Record<string, unknown>, input: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(input)) {
    const current = Object.hasOwn(target, key) ? target[key] : undefined;
    if (value === null) {
      delete target[key];
    } else if (isObject(value) && isObject(current)) {
      patchInPlace(current, value);
    } else {
      setMember(target, key, structuredClone(value));
    }
  }
}

/** Plain assignment would turn a member named `__proto__` into the object's prototype. */
function setMember(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}
