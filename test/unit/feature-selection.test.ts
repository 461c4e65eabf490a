// Unit tests for the `selection` parameter (API.md 5.1).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { applySelection, parseSelection, type Selection } from '../../src/hub/feature-selection.js';

const NS = '@ns:com:here:xyz';

function feature(): Record<string, unknown> {
  return {
    properties: {
      name: 'Benin',
      a: { b: 1, c: 2 },
      [NS]: { space: 's1', tags: ['x'] },
    },
    geometry: { type: 'Point', coordinates: [1, 2, 0] },
    id: 'BEN',
    type: 'Feature',
    extra: { deep: true },
    other: 5,
  };
}

function select(values: string[]): Record<string, unknown> {
  const selection = parseSelection(values);
  assert.ok(selection);
  return applySelection(feature(), selection);
}

describe('parseSelection', () => {
  it('is undefined when absent, empty or *', () => {
    assert.equal(parseSelection([]), undefined);
    assert.equal(parseSelection(['']), undefined);
    assert.equal(parseSelection([' ', '']), undefined);
    assert.equal(parseSelection(['*']), undefined);
    assert.equal(parseSelection(['p.name', '*']), undefined);
  });

  it('* with !geometry keeps everything but the geometry', () => {
    const selection = parseSelection(['*', '!geometry']);
    assert.deepEqual(selection, { members: 'all', omitGeometry: true });
  });

  it('a real selection is defined', () => {
    const selection: Selection | undefined = parseSelection(['p.name']);
    assert.ok(selection);
    assert.equal(selection.omitGeometry, false);
  });
});

describe('applySelection', () => {
  it('selection=p.name → properties {name}, namespace dropped', () => {
    assert.deepEqual(select(['p.name']), {
      type: 'Feature', id: 'BEN', geometry: { type: 'Point', coordinates: [1, 2, 0] }, properties: { name: 'Benin' },
    });
  });

  it('orders members type, id, geometry, properties, then others', () => {
    assert.deepEqual(Object.keys(select(['other', 'p.name', 'extra'])),
      ['type', 'id', 'geometry', 'properties', 'other', 'extra']);
  });

  it('keeps the nesting of p.a.b', () => {
    assert.deepEqual(select(['p.a.b']).properties, { a: { b: 1 } });
  });

  it('a shorter path subsumes a longer one, in either order', () => {
    assert.deepEqual(select(['p.a.b', 'p.a']).properties, { a: { b: 1, c: 2 } });
    assert.deepEqual(select(['p.a', 'p.a.b']).properties, { a: { b: 1, c: 2 } });
  });

  it('properties is {} when nothing below it is selected or found', () => {
    assert.deepEqual(select(['other']).properties, {});
    assert.deepEqual(select(['p.missing', 'p.name.deeper', 'p.a.zz']).properties, {});
  });

  it('keeps the namespace only when selected', () => {
    assert.deepEqual(select(['p.@ns:com:here:xyz']).properties, { [NS]: { space: 's1', tags: ['x'] } });
    assert.deepEqual(select(['p.@ns:com:here:xyz.tags']).properties, { [NS]: { tags: ['x'] } });
  });

  it('root names select root members, missing ones are absent', () => {
    const result = select(['other', 'nothere']);
    assert.equal(result.other, 5);
    assert.equal(Object.hasOwn(result, 'nothere'), false);
  });

  it('does not pick up inherited members', () => {
    const result = select(['constructor', 'p.toString']);
    assert.equal(Object.hasOwn(result, 'constructor'), false);
    assert.deepEqual(result.properties, {});
  });

  it('id, type and geometry are always included', () => {
    const result = select(['other']);
    assert.equal(result.id, 'BEN');
    assert.equal(result.type, 'Feature');
    assert.deepEqual(result.geometry, { type: 'Point', coordinates: [1, 2, 0] });
  });

  it('a feature without geometry gets geometry null', () => {
    const input = feature();
    delete input.geometry;
    const selection = parseSelection(['p.name']);
    assert.ok(selection);
    assert.equal(applySelection(input, selection).geometry, null);
  });

  it('!geometry alone: geometry null, properties {}', () => {
    assert.deepEqual(select(['!geometry']), { type: 'Feature', id: 'BEN', geometry: null, properties: {} });
  });

  it('!geometry with other names omits the geometry too', () => {
    assert.deepEqual(select(['p.name', '!geometry']),
      { type: 'Feature', id: 'BEN', geometry: null, properties: { name: 'Benin' } });
  });

  it('*,!geometry keeps everything else, namespace included', () => {
    const result = select(['*', '!geometry']);
    const expected = feature();
    expected.geometry = null;
    assert.deepEqual(result, expected);
    assert.deepEqual(Object.keys(result), ['type', 'id', 'geometry', 'properties', 'extra', 'other']);
  });

  it('selecting properties as a whole keeps all of them', () => {
    assert.deepEqual(select(['properties']).properties, feature().properties);
  });

  it('does not modify the feature', () => {
    const input = feature();
    const selection = parseSelection(['p.a.b', '!geometry']);
    assert.ok(selection);
    applySelection(input, selection);
    assert.deepEqual(input, feature());
  });

  it('a member named __proto__ stays a plain member', () => {
    const input = JSON.parse('{"type":"Feature","id":"x","properties":{"__proto__":{"a":1}}}') as Record<string, unknown>;
    const selection = parseSelection(['p.__proto__.a']);
    assert.ok(selection);
    const properties = applySelection(input, selection).properties as Record<string, unknown>;
    assert.deepEqual(Object.keys(properties), ['__proto__']);
    assert.equal(Object.getPrototypeOf(properties), Object.prototype);
  });
});
