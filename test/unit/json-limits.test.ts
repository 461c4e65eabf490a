// Unit tests of the JSON nesting and well-formed-Unicode checks: exact bounds, paths in messages, no recursion at any depth.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkJsonText, findJsonValueProblem, findTooDeepText, MAX_BODY_DEPTH, MAX_JSON_DEPTH } from '../../src/core/json-limits.js';

/** `{"a":{"a":…1…}}` with `levels` objects, built without recursion. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

test('values nested exactly to the limit pass; one level more is named with its path', () => {
  assert.equal(findJsonValueProblem(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH), undefined);
  const problem = findJsonValueProblem({ type: 'Feature', properties: nested(MAX_JSON_DEPTH) }, MAX_JSON_DEPTH);
  assert.equal(problem?.kind, 'depth');
  assert.match(problem?.path ?? '', /^properties\.a\.a.*…$/);
  assert.equal(findJsonValueProblem([[[1]]], 3), undefined);
  assert.deepEqual(findJsonValueProblem([[[[1]]]], 3), { kind: 'depth', path: '[0][0][0]' });
});

test('a million levels are checked without a stack overflow, in text and as a value', () => {
  assert.equal(findJsonValueProblem(nested(1_000_000), MAX_JSON_DEPTH)?.kind, 'depth');
  const text = Buffer.from(`{"features":[${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}]}`);
  assert.equal(findTooDeepText(text, MAX_JSON_DEPTH), 'features[0]');
});

test('text nesting counts brackets outside strings only and names the outer member and index', () => {
  assert.equal(findTooDeepText(Buffer.from('{"a":"[[[[[[[[[[[[","b":[1]}'), 2), undefined);
  assert.equal(findTooDeepText(Buffer.from('{"x":1,"modifications":[{},{"f":[[]]}]}'), 4), 'modifications[1]');
  assert.equal(findTooDeepText(Buffer.from('[[[1]]]'), 2), '[0][0]');
  assert.equal(findTooDeepText(Buffer.from('{"k\\"x":[[1]]}'), 2), 'k\\"x[0]');
});

test('lone surrogates in values and member names are found; pairs are fine', () => {
  assert.equal(findJsonValueProblem({ emoji: '😀', '😀': ['\ud83d\ude00'] }, 10), undefined);
  assert.deepEqual(findJsonValueProblem({ properties: { name: 'a\ud800b' } }, 10), { kind: 'unicode', path: 'properties.name' });
  assert.deepEqual(findJsonValueProblem({ properties: { ['\udc00']: 1 } }, 10), { kind: 'unicode', path: 'properties.\uFFFD' });
  assert.deepEqual(findJsonValueProblem({ tags: ['ok', '\ud800'] }, 10), { kind: 'unicode', path: 'tags[1]' });
  assert.deepEqual(findJsonValueProblem('\ude00', 10), { kind: 'unicode', path: '(root)' });
});

test('escaped quotes and backslashes end a string where JSON does: brackets inside strings never count, those after do', () => {
  assert.equal(findTooDeepText(Buffer.from(String.raw`{"a":"x\"[[[[","b":"\\","c":[1]}`), 2), undefined);
  assert.equal(findTooDeepText(Buffer.from(String.raw`{"a":"\\","c":[[1]]}`), 2), 'c[0]');
  assert.equal(findTooDeepText(Buffer.from(String.raw`{"a":"\\\"[[","c":[[1]]}`), 2), 'c[0]');
});

test('a lone surrogate is found in a member name or value within arrays of objects, at any place', () => {
  assert.deepEqual(findJsonValueProblem([{ ok: 1 }, { ['\ud800']: 1 }], 10), { kind: 'unicode', path: '[1].\uFFFD' });
  assert.deepEqual(findJsonValueProblem({ a: [1, 'x', { b: ['\udfff'] }] }, 10), { kind: 'unicode', path: 'a[2].b[0]' });
  assert.equal(findJsonValueProblem({ a: [1, 'x', { b: ['\ud83d\ude00'] }] }, 4), undefined);
  assert.deepEqual(findJsonValueProblem({ a: [1, 'x', { b: ['\ud83d\ude00'] }] }, 3), { kind: 'depth', path: 'a[2].b' });
});

test('the body scan vouches for its values only without surrogate escapes and within the value depth', () => {
  // Writes skip the walk of each parsed feature when this is true (docs/decisions.md, "PostgreSQL ingest", seventh round).
  const vouches = (text: string) => checkJsonText(Buffer.from(text), 'request body', MAX_BODY_DEPTH);
  assert.equal(vouches('{"a":"plain é 😀","b":"\\u00e9\\u0000\\\\ud800","c":[1]}'), true);
  for (const escape of ['\\ud800', '\\uD800', '\\udc00', '\\uDBFF', '\\uDfFf', '\\ud83d\\ude00']) {
    assert.equal(vouches(`{"a":"x${escape}y"}`), false, escape);
    assert.equal(vouches(`{"x${escape}":1}`), false, `key ${escape}`);
  }
  assert.equal(vouches('{"a":"\\\\\\ud800"}'), false);
  assert.equal(vouches('{"a":"\\ud7ff\\ue000"}'), true);
  const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
  assert.equal(vouches(deep(MAX_JSON_DEPTH)), true);
  assert.equal(vouches(deep(MAX_JSON_DEPTH + 1)), false);
  assert.throws(() => vouches(deep(MAX_BODY_DEPTH + 1)), /nest/i);
});
