// Unit tests for the three-way merge of JSON values behind version merges (ADR 002, "Merges").
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { type Conflicts, mergeObjects } from '../../src/hub/three-way-merge.js';

const merge = (base: object, head: object, written: object, rule: 'error' | 'retain' | 'replace' = 'error') => {
  const conflicts: Conflicts = [];
  const merged = mergeObjects(base as Record<string, unknown>, head as Record<string, unknown>, written as Record<string, unknown>, 'p', rule, conflicts);
  return { merged, conflicts };
};

describe('mergeObjects', () => {
  it('takes each side\'s changes of different members, removals included', () => {
    assert.deepEqual(merge({ a: 1, b: 1, c: 1 }, { a: 2, b: 1, c: 1 }, { a: 1, b: 1 }), { merged: { a: 2, b: 1 }, conflicts: [] });
    assert.deepEqual(merge({}, { x: 1 }, { y: 2 }), { merged: { x: 1, y: 2 }, conflicts: [] });
  });

  it('merges nested objects member by member, and names conflicts by path', () => {
    assert.deepEqual(merge({ o: { a: 1, b: 1 } }, { o: { a: 2, b: 1 } }, { o: { a: 1, b: 2 } }), { merged: { o: { a: 2, b: 2 } }, conflicts: [] });
    assert.deepEqual(merge({ o: { a: 1 } }, { o: { a: 2 } }, { o: { a: 3 } }).conflicts, ['p.o.a']);
    // A nested object one side removed while the other changed it is a conflict of the whole member.
    assert.deepEqual(merge({ o: { a: 1 } }, { o: { a: 2 } }, {}).conflicts, ['p.o']);
  });

  it('keeps the same change on both sides, and treats arrays as one value', () => {
    assert.deepEqual(merge({ a: 1 }, { a: 2 }, { a: 2 }), { merged: { a: 2 }, conflicts: [] });
    assert.deepEqual(merge({ l: [1, 2] }, { l: [1, 3] }, { l: [0, 2] }).conflicts, ['p.l']);
  });

  it('resolves conflicts by the rule: HEAD kept, or the written value taken', () => {
    assert.deepEqual(merge({ a: 1 }, { a: 2 }, { a: 3 }, 'retain'), { merged: { a: 2 }, conflicts: [] });
    assert.deepEqual(merge({ a: 1 }, { a: 2 }, { a: 3 }, 'replace'), { merged: { a: 3 }, conflicts: [] });
  });

  it('keeps a member named __proto__ as data', () => {
    const { merged } = merge({}, {}, JSON.parse('{"__proto__": {"x": 1}}') as object);
    assert.deepEqual(Object.keys(merged), ['__proto__']);
    assert.equal(Object.getPrototypeOf(merged), Object.prototype);
  });
});
