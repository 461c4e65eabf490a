// Unit tests of the scanner that splits large FeatureCollection bodies into features.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FeatureArrayScanner } from '../../src/http/body/feature-array-scanner.js';
import { HubError } from '../../src/core/errors.js';

function scan(text: string, chunkSize: number): unknown {
  const scanner = new FeatureArrayScanner();
  const bytes = Buffer.from(text);
  for (let i = 0; i < bytes.length; i += chunkSize) scanner.write(bytes.subarray(i, i + chunkSize));
  return scanner.end();
}

const tricky = {
  type: 'FeatureCollection',
  name: 'with "features": [1, 2] inside a string, and brackets ] } [ {',
  features: [
    { type: 'Feature', id: 'a"b\\', geometry: { type: 'Point', coordinates: [1.5, -2, 3] }, properties: { features: [{ x: '],' }], 'ü': 'é' } },
    { type: 'Feature', id: 'two', geometry: null, properties: {} },
    'not a feature',
    42,
    [],
  ],
  bbox: [0, 0, 1, 1],
};

test('gives the same value as JSON.parse at every chunk size, including splits inside strings and escapes', () => {
  const text = JSON.stringify(tricky, null, 1);
  for (const size of [1, 2, 3, 5, 7, 16, 64, text.length]) assert.deepEqual(scan(text, size), tricky, `chunk size ${size}`);
});

test('an empty features array and a root Feature are passed through whole', () => {
  assert.deepEqual(scan('{"type":"FeatureCollection","features":[ ]}', 4), { type: 'FeatureCollection', features: [] });
  const feature = { type: 'Feature', properties: { features: [1, 2] } };
  assert.deepEqual(scan(JSON.stringify(feature), 3), feature);
});

test('only the root features member is split; a nested one stays inside its feature', () => {
  const body = { type: 'FeatureCollection', meta: { features: [{ a: 1 }] }, features: [{ type: 'Feature' }] };
  assert.deepEqual(scan(JSON.stringify(body), 5), body);
});

test('a malformed feature is reported with its index', () => {
  const text = '{"type":"FeatureCollection","features":[{"type":"Feature"},{"type":"Feature",}]}';
  assert.throws(() => scan(text, 8), (error: unknown) =>
    error instanceof HubError && error.code === 'invalidJsonFeatures' && error.message.includes('features[1]'));
});

test('a body cut off inside the features array is malformed JSON', () => {
  const text = '{"type":"FeatureCollection","features":[{"type":"Feature"},{"type":"Fea';
  assert.throws(() => scan(text, 8), (error: unknown) => error instanceof HubError && error.code === 'invalidJsonFeatures');
});

test('a root that is not an object comes back as parsed for the caller to reject', () => {
  assert.deepEqual(scan('[1,2,3]', 2), [1, 2, 3]);
});
