// The place of a lon/lat along a Hilbert curve over the world: positions near each other on the curve are near on the map.

/** Cells along each axis of the curve's grid: 2^16, about 600 m of longitude at the equator. */
const SIDE = 1 << 16;

function cellOf(fraction: number): number {
  return Math.min(SIDE - 1, Math.max(0, Math.floor(fraction * SIDE)));
}

/**
 * The distance along the Hilbert curve (0 … 2^32 − 1) of the grid cell holding a lon/lat. Unlike a Z-order, consecutive
 * distances are always neighbouring cells, so a run of positions sorted by it stays in one part of the map.
 */
export function hilbertIndex(lon: number, lat: number): number {
  let x = cellOf((lon + 180) / 360);
  let y = cellOf((lat + 90) / 180);
  let distance = 0;
  for (let half = SIDE >>> 1; half > 0; half >>>= 1) {
    const right = (x & half) === 0 ? 0 : 1;
    const top = (y & half) === 0 ? 0 : 1;
    distance += half * half * ((3 * right) ^ top);
    // Turn the quadrant so that the curve inside it runs from the previous quadrant to the next one.
    if (top === 0) {
      if (right === 1) {
        x = SIDE - 1 - x;
        y = SIDE - 1 - y;
      }
      [x, y] = [y, x];
    }
  }
  return distance;
}
