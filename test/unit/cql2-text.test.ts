// The CQL2-text grammar against the standard's examples: each text parses to the CQL2-JSON the standard publishes for it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from '../../src/hub/ogc/cql2/cql2-text-parser.js';

interface Example {
  example: string;
  text: string;
  json: unknown;
}

const EXAMPLES = JSON.parse(readFileSync(fileURLToPath(new URL('../../../test/fixtures/cql2-examples.json', import.meta.url)), 'utf8')) as Example[];

test('each example text parses to the standard\'s JSON (an -alt text to that of the example it is an alternative of)', () => {
  const byName = new Map(EXAMPLES.map((example) => [example.example, example]));
  for (const example of EXAMPLES) {
    const json = example.json ?? byName.get(example.example.replace(/-alt\d+$/u, ''))?.json;
    assert.notEqual(json, undefined, example.example);
    assert.deepEqual(parse(example.text), json, `${example.example}: ${example.text}`);
  }
});

test('keywords are case-insensitive; quoted names and doubled quotes are read as the standard says', () => {
  assert.deepEqual(parse('"my prop" <> \'it\'\'s\' and NOT x is null'), {
    op: 'and',
    args: [{ op: '<>', args: [{ property: 'my prop' }, "it's"] }, { op: 'not', args: [{ op: 'isNull', args: [{ property: 'x' }] }] }],
  });
});
