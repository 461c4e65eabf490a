// Unit tests for the Hilbert curve over the world that orders R*Tree inserts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hilbertIndex } from '../../src/geo/hilbert-curve.js';

/** The centre of grid cell (x, y) of the curve's 2^16 × 2^16 grid, as lon/lat. */
function cellCentre(x: number, y: number): [number, number] {
  return [-180 + ((x + 0.5) * 360) / 65536, -90 + ((y + 0.5) * 180) / 65536];
}

test('the curve visits the cells of a block one neighbour after another', () => {
  // The first 4^k steps of the curve fill the 2^k × 2^k block at its start (the south-west corner of the world).
  const byIndex = new Map<number, [number, number]>();
  for (let x = 0; x < 8; x++) {
    for (let y = 0; y < 8; y++) byIndex.set(hilbertIndex(...cellCentre(x, y)), [x, y]);
  }
  assert.deepEqual([...byIndex.keys()].sort((a, b) => a - b), Array.from({ length: 64 }, (_, i) => i));
  for (let i = 1; i < 64; i++) {
    const [x0, y0] = byIndex.get(i - 1)!;
    const [x1, y1] = byIndex.get(i)!;
    assert.equal(Math.abs(x1 - x0) + Math.abs(y1 - y0), 1, `step ${i} moves to a neighbouring cell`);
  }
});

test('the whole world maps onto the curve, its edges included', () => {
  assert.equal(hilbertIndex(-180, -90), 0);
  for (const [lon, lat] of [[180, 90], [180, -90], [-180, 90], [0, 0], [179.999999, 89.999999]]) {
    const index = hilbertIndex(lon, lat);
    assert.ok(Number.isInteger(index) && index >= 0 && index < 2 ** 32, `${lon},${lat}: ${index}`);
  }
  // The curve ends in the south-east corner, after visiting every cell.
  assert.equal(hilbertIndex(180, -90), 2 ** 32 - 1);
});
