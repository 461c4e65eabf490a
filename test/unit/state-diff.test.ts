// Unit tests of the activity log's state diff: applied as a feature PATCH to the earlier state, it gives the later one.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { FeatureParts } from '../../src/hub/feature-text.js';
import { applyPatch } from '../../src/hub/merge-patch.js';
import { stateDiff } from '../../src/hub/activity-log/state-diff.js';

const state = (properties: Record<string, unknown>, tags: string[] = [], extra: Record<string, unknown> = {}): FeatureParts => ({
  id: 'a', geometry: { type: 'Point', coordinates: [1, 2, 0] }, properties, extra,
  namespace: { space: 's', createdAt: 1, updatedAt: 1, tags },
});

const document = (parts: FeatureParts): Record<string, unknown> =>
  ({ ...parts.extra, geometry: parts.geometry, properties: { ...parts.properties, '@ns:com:here:xyz': { tags: parts.namespace.tags } } });

test('an insert\'s diff is the whole state', () => {
  const after = state({ n: 1 }, ['t'], { extra: true });
  assert.deepEqual(stateDiff(undefined, after), document(after));
});

test('only what changed, nested objects member by member, removals as null, arrays whole', () => {
  const before = state({ keep: 1, change: 1, gone: 'x', nested: { a: 1, b: 2 }, list: [1, 2] }, ['t']);
  const after = state({ keep: 1, change: 2, nested: { a: 1, b: 3, c: 4 }, list: [1] }, ['t', 'u']);
  const diff = stateDiff(before, after);
  assert.deepEqual(diff, { properties: { change: 2, gone: null, nested: { b: 3, c: 4 }, list: [1], '@ns:com:here:xyz': { tags: ['t', 'u'] } } });
  assert.deepEqual(applyPatch(document(before), diff).result, document(after));
});

test('an unchanged state has an empty diff; a member named __proto__ stays a member', () => {
  assert.deepEqual(stateDiff(state({ n: 1 }), state({ n: 1 })), {});
  const after = state(JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>);
  const diff = stateDiff(state({}), after);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  assert.deepEqual(Object.keys(diff.properties as object), ['__proto__']);
  assert.deepEqual(applyPatch(document(state({})), diff).result, document(after));
});
