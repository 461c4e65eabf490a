// Unit tests for the patch walk (API.md 4.4, 3.4) and deep JSON equality.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applyPatch, deepEqual } from '../../src/hub/merge-patch.js';

describe('applyPatch', () => {
  it('follows the API.md 4.4 example', () => {
    const stored = { properties: { a: 1, b: { x: 1, y: 2 }, c: [1, 2] } };
    const input = { properties: { a: null, b: { y: 3 }, c: [9] } };
    const { result, changed } = applyPatch(stored, input);
    assert.deepEqual(result, { properties: { b: { x: 1, y: 3 }, c: [9] } });
    assert.equal(changed, true);
  });

  it('inserts members missing in stored, as given', () => {
    const { result } = applyPatch({ a: 1 }, { b: { c: 2, d: null } });
    assert.deepEqual(result, { a: 1, b: { c: 2, d: null } });
  });

  it('replaces scalars, arrays and type changes', () => {
    const { result } = applyPatch(
      { s: 'x', arr: [1, { k: 1 }], o: { k: 1 }, n: 5 },
      { s: 'y', arr: [{ k: 2 }], o: [1], n: { k: 2 } });
    assert.deepEqual(result, { s: 'y', arr: [{ k: 2 }], o: [1], n: { k: 2 } });
  });

  it('null removes a member, also geometry; null for a missing member is a no-op', () => {
    const { result, changed } = applyPatch({ geometry: { type: 'Point', coordinates: [0, 0] }, id: 'a' },
      { geometry: null, nothere: null });
    assert.deepEqual(result, { id: 'a' });
    assert.equal(changed, true);
  });

  it('keeps members the input does not mention', () => {
    const { result } = applyPatch({ a: 1, b: { c: 1, d: 2 } }, { b: { d: 3 } });
    assert.deepEqual(result, { a: 1, b: { c: 1, d: 3 } });
  });

  it('changed is false when nothing changes', () => {
    assert.equal(applyPatch({ a: 1, b: { c: [1, 2] } }, {}).changed, false);
    assert.equal(applyPatch({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 2] } }).changed, false);
    assert.equal(applyPatch({ a: 1 }, { zz: null }).changed, false);
  });

  it('changed is true for a deep change', () => {
    assert.equal(applyPatch({ b: { c: [1, 2] } }, { b: { c: [1, 3] } }).changed, true);
  });

  it('does not mutate its inputs and shares nothing with them', () => {
    const stored = { p: { a: 1, keep: { k: 1 } }, list: [1] };
    const input = { p: { a: 2, add: { n: [1] } } };
    const storedCopy = structuredClone(stored);
    const inputCopy = structuredClone(input);
    const { result } = applyPatch(stored, input);
    assert.deepEqual(stored, storedCopy);
    assert.deepEqual(input, inputCopy);
    const p = result.p as Record<string, unknown>;
    assert.notEqual(p.keep, stored.p.keep);
    assert.notEqual(p.add, input.p.add);
    assert.notEqual(result.list, stored.list);
  });

  it('treats a __proto__ member as a plain member', () => {
    const input = JSON.parse('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    const { result, changed } = applyPatch({ a: 1 }, input);
    assert.deepEqual(Object.keys(result), ['a', '__proto__']);
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.equal(changed, true);
  });
});

describe('deepEqual', () => {
  it('compares scalars strictly by type', () => {
    assert.equal(deepEqual(1, 1), true);
    assert.equal(deepEqual(1, '1'), false);
    assert.equal(deepEqual(null, null), true);
    assert.equal(deepEqual(null, {}), false);
    assert.equal(deepEqual(false, 0), false);
  });

  it('ignores object member order', () => {
    assert.equal(deepEqual({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }), true);
  });

  it('detects differing members', () => {
    assert.equal(deepEqual({ a: 1 }, { a: 1, b: 2 }), false);
    assert.equal(deepEqual({ a: 1, b: 2 }, { a: 1 }), false);
    assert.equal(deepEqual({ a: 1 }, { b: 1 }), false);
    assert.equal(deepEqual({ a: { b: 1 } }, { a: { b: 2 } }), false);
  });

  it('respects array order and length, and arrays are not objects', () => {
    assert.equal(deepEqual([1, [2, 3]], [1, [2, 3]]), true);
    assert.equal(deepEqual([1, 2], [2, 1]), false);
    assert.equal(deepEqual([1], [1, 1]), false);
    assert.equal(deepEqual([], {}), false);
    assert.equal(deepEqual({ 0: 1 }, [1]), false);
  });
});
