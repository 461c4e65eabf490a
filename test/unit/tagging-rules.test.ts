// Unit tests for what tagging rules see and keep: a frozen-array copy of the features, a bounded jsonpath-plus cache, and filters that cannot call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JSONPath } from 'jsonpath-plus';
import { CACHED_RULE_TEXTS, ruleView, selectedFeatures } from '../../src/hub/processors/tagging-rules.js';

test('the rule view is equal, its arrays are frozen copies, objects without arrays are shared, an own __proto__ stays a member', () => {
  const text = '{"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"__proto__":{"p":1},"plain":{"q":2},"list":[{"x":[3]}]}}';
  const feature = JSON.parse(text) as Record<string, unknown>;
  const view = ruleView(feature) as Record<string, unknown>;
  assert.deepEqual(view, JSON.parse(text));
  const given = feature.properties as Record<string, unknown>;
  const properties = view.properties as Record<string, unknown>;
  assert.deepEqual(Object.keys(properties), ['__proto__', 'plain', 'list']);
  assert.equal(Object.getPrototypeOf(properties), Object.prototype);
  assert.equal(Object.getOwnPropertyDescriptor(properties, '__proto__')?.value, given.__proto__);
  assert.equal(properties.plain, given.plain);
  const list = properties.list as Array<{ x: number[] }>;
  assert.ok(Object.isFrozen(list) && Object.isFrozen(list[0].x));
  assert.notEqual(list, given.list);
  assert.ok(!Object.isFrozen(given.list));
});

test('jsonpath-plus keeps the texts of at most CACHED_RULE_TEXTS rules', () => {
  const collection = ruleView({ type: 'FeatureCollection', features: [{ type: 'Feature', id: 'a', geometry: null, properties: { n: 1 } }] }) as object;
  for (let i = 0; i <= 2 * CACHED_RULE_TEXTS; i++) {
    assert.deepEqual(selectedFeatures({ tag: 't', path: `$.features[?(@.properties.n === ${i % 2})]` }, collection), new Set(i % 2 === 1 ? [0] : []));
    selectedFeatures({ tag: 't', path: `$.features[?(@.properties.n === ${i} + 1000)]` }, collection);
  }
  // Each rule text leaves its path and its filter script in the cache.
  const cached = Object.keys(JSONPath.cache as object).length;
  assert.ok(cached <= 2 * CACHED_RULE_TEXTS, `${cached} cache entries`);
});

test('rules stored before filters were checked: calls, regular expressions and unparsable filters match nothing, at once', { timeout: 10_000 }, () => {
  const name = `${'a'.repeat(40)}!`;
  const collection = ruleView({ type: 'FeatureCollection', features: [{ type: 'Feature', id: 'a', geometry: null, properties: { name, x: [{ a: 1 }] } }] }) as object;
  for (const path of ['$.features[?(@.properties.name.match(/^(a+)+$/))]', '$.features[?(@.properties.name.padStart(500000000))]',
    '$.features[?(@.properties.constructor)]', '$.features[*].properties.x[?(@.a ==)]', '$.features[(@.length.toString())]']) {
    assert.deepEqual(selectedFeatures({ tag: 't', path }, collection), new Set(), path);
  }
  assert.deepEqual(selectedFeatures({ tag: 't', path: '$.features[?(@.properties.name.length === 41)]' }, collection), new Set([0]));
});
