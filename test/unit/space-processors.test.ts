// Unit tests for the processor cache: a space's processors are compiled once per definition, again when it changes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SpaceDefinition } from '../../src/core/space-definition.js';
import { ProcessorCache } from '../../src/hub/processors/space-processors.js';

const definition = (updatedAt: number, required: string): SpaceDefinition => ({
  title: 't', createdAt: 1, updatedAt,
  processors: { 'schema-validator': [{ params: { schema: { type: 'object', required: [required] } } }] },
});

test('the same definition version is compiled once; a new updatedAt compiles the new schema', () => {
  const cache = new ProcessorCache();
  const first = cache.get('s', definition(1, 'a'));
  // A fresh copy read again from storage, as every request does, gets the compiled processors.
  assert.equal(cache.get('s', structuredClone(definition(1, 'a'))), first);
  const second = cache.get('s', definition(2, 'b'));
  assert.notEqual(second, first);
  assert.equal(second.validators[0]({ b: 1 }), undefined);
  assert.match(second.validators[0]({ a: 1 }) ?? '', /required property 'b'/);
});

test('a space without processors compiles nothing', () => {
  const cache = new ProcessorCache();
  const none = cache.get('s', { title: 't', createdAt: 1, updatedAt: 1 });
  assert.deepEqual(none, { rules: [], validators: [] });
});
