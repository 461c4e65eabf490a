// The OGC form of stored feature texts: flat properties from the namespace and 2D where the hub padded z, checked against a parse of the same texts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ByteWriter } from '../../src/core/byte-writer.js';
import { appendZeroZDropped } from '../../src/hub/ogc/planar-text.js';
import { featureTexts } from '../../src/hub/feature-text.js';
import type { Geometry } from '../../src/geo/geometry.js';
import { ogcFeatureTexts as ogcFeatureBytes } from '../../src/hub/ogc/ogc-feature-text.js';

const ogcFeatureTexts = (texts: string): string => ogcFeatureBytes(texts).toString();

function zeroZDropped(geometry: string): string {
  const bytes = Buffer.from(`x${geometry}y`);
  const out = new ByteWriter(0);
  appendZeroZDropped(bytes, 1, bytes.length - 1, out);
  return out.bytes().toString();
}

const NS = '@ns:com:here:xyz';
const at = Date.UTC(2026, 10, 26, 12, 0, 0);

function stored(id: string, geometry: Geometry | null, properties: Record<string, unknown>, tags: string[] = [], extra: Record<string, unknown> = {}): string {
  return featureTexts({ id, geometry, properties, namespace: { space: 's', createdAt: at, updatedAt: at + 1, tags }, extra }).stored.json;
}

test('2D positions come back when every z is zero, and z stays when any is not', () => {
  assert.equal(zeroZDropped('{"type":"Point","coordinates":[1.5,-2,0]}'), '{"type":"Point","coordinates":[1.5,-2]}');
  assert.equal(zeroZDropped('{"type":"LineString","coordinates":[[1,2,0],[3,4,-0]]}'), '{"type":"LineString","coordinates":[[1,2],[3,4]]}');
  assert.equal(zeroZDropped('{"type":"LineString","coordinates":[[1,2,0],[3,4,5]]}'), '{"type":"LineString","coordinates":[[1,2,0],[3,4,5]]}');
  assert.equal(zeroZDropped('{"type":"Point","coordinates":[1,2,0,7]}'), '{"type":"Point","coordinates":[1,2,0,7]}');
  assert.equal(zeroZDropped('{"type":"Point","coordinates":[1,2]}'), '{"type":"Point","coordinates":[1,2]}');
  assert.equal(zeroZDropped('{"type":"Point","coordinates":[]}'), '{"type":"Point","coordinates":[]}');
  assert.equal(zeroZDropped('null'), 'null');
  const collection = '{"type":"GeometryCollection","geometries":[{"type":"Point","coordinates":[1,2,0]},{"type":"Polygon","coordinates":[[[0,0,0],[1,0,0],[1,1,0],[0,0,0]]]}]}';
  assert.deepEqual(JSON.parse(zeroZDropped(collection)), {
    type: 'GeometryCollection',
    geometries: [{ type: 'Point', coordinates: [1, 2] }, { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] }],
  });
});

test('the namespace becomes createdAt, updatedAt and tags after the feature\'s own properties; its own of those names win', () => {
  const plain = JSON.parse(ogcFeatureTexts(stored('a', { type: 'Point', coordinates: [1, 2] }, { name: 'x', n: { deep: [1, '}'] } }, ['t1', 't"2'])));
  assert.deepEqual(plain, {
    type: 'Feature', id: 'a', geometry: { type: 'Point', coordinates: [1, 2] },
    properties: { name: 'x', n: { deep: [1, '}'] }, createdAt: '2026-11-26T12:00:00.000Z', updatedAt: '2026-11-26T12:00:00.001Z', tags: ['t1', 't"2'] },
  });
  assert.deepEqual(Object.keys(plain.properties), ['name', 'n', 'createdAt', 'updatedAt', 'tags']);
  const own = JSON.parse(ogcFeatureTexts(stored('b', null, { tags: 'mine', updatedAt: 3 })));
  assert.deepEqual(own.properties, { tags: 'mine', updatedAt: 3, createdAt: '2026-11-26T12:00:00.000Z' });
  assert.equal(own.geometry, null);
  const empty = JSON.parse(ogcFeatureTexts(stored('c', { type: 'Point', coordinates: [1, 2, 3] }, {}, [], { bbox: [1, 2, 1, 2], title: 'x' })));
  assert.deepEqual(empty, {
    type: 'Feature', id: 'c', geometry: { type: 'Point', coordinates: [1, 2, 3] },
    properties: { createdAt: '2026-11-26T12:00:00.000Z', updatedAt: '2026-11-26T12:00:00.001Z', tags: [] }, bbox: [1, 2, 1, 2], title: 'x',
  });
});

test('a page of joined texts is reshaped feature by feature, as each alone; a text laid out otherwise is parsed', () => {
  const texts = [
    stored('p,1', { type: 'Point', coordinates: [1, 2] }, { s: '","properties":{' }, ['x']),
    stored('p2', { type: 'MultiPoint', coordinates: [[1, 2], [3, 4]] }, { [`a${NS}`]: 1, name: 'Zürich ☃' }),
    stored('backslashes', null, { path: 'C:\\dir\\', q: '"\\"', after: 1 }),
    stored('nested', null, { osm: { tags: { amenity: 'cafe' } }, [NS]: 'not the namespace' }, ['n']),
    stored('features inside', null, { list: [{}, { type: 'Feature', id: 'x', properties: { [NS]: { tags: ['inner'] } } }] }, ['outer']),
    JSON.stringify({ type: 'Feature', properties: { [NS]: { createdAt: at, tags: ['y'] }, k: 1 }, geometry: { type: 'Point', coordinates: [5, 6, 0] }, id: 'odd' }),
  ];
  const page = JSON.parse(`[${ogcFeatureTexts(texts.join(','))}]`) as unknown[];
  assert.deepEqual(page, texts.map((text) => JSON.parse(ogcFeatureTexts(text))));
  assert.deepEqual((page[2] as { properties: Record<string, unknown> }).properties.path, 'C:\\dir\\');
  assert.deepEqual((page[2] as { properties: Record<string, unknown> }).properties.q, '"\\"');
  assert.deepEqual((page[3] as { properties: unknown }).properties, {
    osm: { tags: { amenity: 'cafe' } }, createdAt: '2026-11-26T12:00:00.000Z', updatedAt: '2026-11-26T12:00:00.001Z', tags: ['n'],
  });
  assert.deepEqual((page[4] as { properties: { tags: unknown } }).properties.tags, ['outer']);
  assert.deepEqual(page[5], {
    type: 'Feature', id: 'odd', geometry: { type: 'Point', coordinates: [5, 6] }, properties: { k: 1, createdAt: '2026-11-26T12:00:00.000Z', tags: ['y'] },
  });
  assert.equal(ogcFeatureTexts(''), '');
});
