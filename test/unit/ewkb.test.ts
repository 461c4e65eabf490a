// Unit tests of the hex EWKB the PostgreSQL storage writes geometries as: exact bytes, and geometries of any size one after another.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Geometry } from '../../src/geo/geometry.js';
import { hexEwkb } from '../../src/storage/postgres/ewkb.js';

/** POINT(1 2) with SRID 4326: little-endian, type 1 with the SRID flag, 4326, then x and y as doubles. */
const POINT_1_2 = '0101000020e6100000000000000000f03f0000000000000040';

function line(positions: number): Geometry {
  return { type: 'LineString', coordinates: Array.from({ length: positions }, (_, i) => [i / positions, 1 - i / positions]) };
}

test('a point is its EWKB bytes, altitude dropped', () => {
  assert.equal(hexEwkb({ type: 'Point', coordinates: [1, 2] }), POINT_1_2);
  assert.equal(hexEwkb({ type: 'Point', coordinates: [1, 2, 30] }), POINT_1_2);
});

test('geometries written one after another keep only their own bytes, small after large and after one over the reused buffer', () => {
  for (const positions of [100, 70_000]) {
    // Header 5 and SRID 4, the position count 4, then 16 bytes a position: two hex digits a byte.
    assert.equal(hexEwkb(line(positions)).length, 2 * (5 + 4 + 4 + 16 * positions));
    assert.equal(hexEwkb({ type: 'Point', coordinates: [1, 2] }), POINT_1_2);
  }
  assert.equal(hexEwkb(line(2)), '0102000020e6100000020000000000000000000000000000000000f03f000000000000e03f000000000000e03f');
});
