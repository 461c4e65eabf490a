// The tiles of one level a geometry intersects, by the same test a tile read selects features with (changed tiles, issue 24).
import { geometryBBox } from './bbox.js';
import type { Geometry } from './geometry.js';
import { spatialPredicate } from './spatial-predicate.js';
import { mercatorX, mercatorY, type TileScheme, tileBounds } from './tile-schemes.js';

/** A tile of a level, in the coordinates `Tile` holds (see tile-schemes.ts). */
export interface TileCell {
  x: number;
  y: number;
}

/** The lowest level a scheme names tiles at: a quadkey or a here tile id has at least one digit. */
export const minTileLevel = (scheme: TileScheme): number => (scheme === 'web' || scheme === 'tms' ? 0 : 1);

/** The columns and rows of a level: here tiles are square in degrees, so the grid has half as many rows as columns. */
function gridSize(scheme: TileScheme, level: number): { columns: number; rows: number } {
  return { columns: 2 ** level, rows: scheme === 'here' ? 2 ** (level - 1) : 2 ** level };
}

/**
 * The candidate columns and rows of the geometry's bounds, one more on each side: a geometry on a tile's edge touches
 * the neighbour too, and the exact test decides with the neighbour's own bounds as the tile read computes them.
 */
function candidates(scheme: TileScheme, level: number, bounds: [number, number, number, number]) {
  const [west, south, east, north] = bounds;
  const { columns, rows } = gridSize(scheme, level);
  const clamp = (value: number, size: number) => Math.min(size - 1, Math.max(0, value));
  if (scheme === 'here') {
    const size = 360 / columns;
    return {
      x0: clamp(Math.floor((west + 180) / size) - 1, columns), x1: clamp(Math.floor((east + 180) / size) + 1, columns),
      y0: clamp(Math.floor((south + 90) / size) - 1, rows), y1: clamp(Math.floor((north + 90) / size) + 1, rows),
    };
  }
  return {
    x0: clamp(Math.floor(mercatorX(west, level)) - 1, columns), x1: clamp(Math.floor(mercatorX(east, level)) + 1, columns),
    y0: clamp(Math.floor(mercatorY(north, level)) - 1, rows), y1: clamp(Math.floor(mercatorY(south, level)) + 1, rows),
  };
}

/** How many tiles `tilesIntersecting` would test for the geometry: what bounds the work before it starts. */
export function candidateCount(geometry: Geometry, scheme: TileScheme, level: number): number {
  const bounds = geometryBBox(geometry);
  if (bounds === null) return 0;
  const { x0, x1, y0, y1 } = candidates(scheme, level, bounds);
  return (x1 - x0 + 1) * (y1 - y0 + 1);
}

/**
 * Every tile of `level` whose tile read (margin 0) finds the geometry: the tile's bounds intersect it, boundaries
 * included, exactly as the storage engines test a tile's box (spatial-predicate.ts). Web-Mercator tiles end at
 * ±85.05°: a geometry wholly beyond them is in none.
 */
export function* tilesIntersecting(geometry: Geometry, scheme: TileScheme, level: number): Iterable<TileCell> {
  const bounds = geometryBBox(geometry);
  if (bounds === null) return;
  const { x0, x1, y0, y1 } = candidates(scheme, level, bounds);
  for (let x = x0; x <= x1; x++) {
    for (let y = y0; y <= y1; y++) {
      const box = tileBounds({ scheme, level, x, y, format: 'geojson' });
      if (spatialPredicate({ kind: 'box', box })(geometry)) yield { x, y };
    }
  }
}
