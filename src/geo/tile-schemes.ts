// Tiles of the four tile schemes (API.md 6.2): their ids, bounds and margin-enlarged bounds; parsing a route's id is core/tile-ids.ts.
import type { BBox } from './bbox.js';

export type TileScheme = 'quadkey' | 'web' | 'tms' | 'here';
export type TileFormat = 'geojson' | 'mvt' | 'mvtf';

/**
 * A parsed tile. For `web`, `quadkey` and `tms`, `x`/`y` are Web-Mercator slippy-map
 * coordinates (y = 0 at the north) whatever the scheme was; for `here`, the geographic
 * quad-tree column and row (y = 0 at the south).
 */
export interface Tile {
  scheme: TileScheme;
  level: number;
  x: number;
  y: number;
  format: TileFormat;
}

export type HereTileEncoding = 'base4' | 'decimal';

/**
 * Deepest level of every scheme. API.md bounds only `here` (31); Web-Mercator tiles get the same
 * cap, so x and y stay exact integers and quadkeys stay as long as `here` ones (a level-31 tile
 * is about 2 cm wide).
 */
export const MAX_TILE_LEVEL = 31;

/** Web-Mercator latitude limit: the north edge of web tile row 0. */
export const MERCATOR_MAX_LATITUDE = 85.0511287798066;

/** The quadkey of a cell: `level` digits, each `xbit + 2*ybit`, most significant first. */
export function quadkeyOf(level: number, x: number, y: number): string {
  let quadkey = '';
  for (let bit = level - 1; bit >= 0; bit--) {
    const mask = 2 ** bit;
    quadkey += String((Math.floor(x / mask) % 2) + 2 * (Math.floor(y / mask) % 2));
  }
  return quadkey;
}

/**
 * The id the tile route takes for the tile at (`x`, `y`) of `level`, in the coordinates `Tile` holds (web, quadkey and
 * tms: slippy-map, y = 0 at the north; here: geographic, y = 0 at the south): the inverse of core/tile-ids.ts's parseTileId
 * without a format suffix. `here` tiles are named by their quadkey, in the hub's configured encoding.
 */
export function tileIdOf(scheme: TileScheme, level: number, x: number, y: number, hereEncoding: HereTileEncoding): string {
  switch (scheme) {
    case 'quadkey':
      return quadkeyOf(level, x, y);
    case 'web':
      return `${level}_${x}_${y}`;
    case 'tms':
      return `${level}_${x}_${2 ** level - 1 - y}`;
    case 'here': {
      const quadkey = quadkeyOf(level, x, y);
      if (hereEncoding === 'base4') return quadkey;
      // The decimal form is the quadkey in base 4 behind a level-marker digit 1 (see decimalToQuadkey in core/tile-ids.ts).
      let value = 1n;
      for (const digit of quadkey) value = value * 4n + BigInt(digit);
      return value.toString();
    }
  }
}


/** Lon/lat bounds [W, S, E, N] of a tile. */
export function tileBounds(tile: Tile): BBox {
  if (tile.scheme === 'here') {
    const size = 360 / 2 ** tile.level;
    const west = size * tile.x - 180;
    const south = size * tile.y - 90;
    return [west, south, west + size, south + size];
  }
  return mercatorBounds(tile.level, tile.x, tile.y, tile.x + 1, tile.y + 1);
}

/**
 * Bounds of a Web-Mercator tile grown by `margin` pixels (256 px per tile) on each side, in tile
 * space, clamped at the world edge without wrapping. `here` tiles ignore the margin (API.md 6.2).
 */
export function enlargedBounds(tile: Tile, margin: number): BBox {
  if (tile.scheme === 'here' || margin <= 0) return tileBounds(tile);
  const grow = margin / 256;
  const size = 2 ** tile.level;
  const clamp = (value: number) => Math.min(size, Math.max(0, value));
  return mercatorBounds(tile.level, clamp(tile.x - grow), clamp(tile.y - grow), clamp(tile.x + 1 + grow), clamp(tile.y + 1 + grow));
}

/** Bounds of the tile-space rectangle (x0, y0)-(x1, y1) at `level`, y growing south. */
export function mercatorBounds(level: number, x0: number, y0: number, x1: number, y1: number): BBox {
  const size = 2 ** level;
  return [mercatorLongitude(x0, size), mercatorLatitude(y1, size), mercatorLongitude(x1, size), mercatorLatitude(y0, size)];
}

function mercatorLongitude(x: number, size: number): number {
  return (x / size) * 360 - 180;
}

function mercatorLatitude(y: number, size: number): number {
  return (Math.atan(Math.sinh(Math.PI * (1 - (2 * y) / size))) * 180) / Math.PI;
}

/** Web-Mercator tile-space x (fractional) of a longitude at `level`. */
export function mercatorX(longitude: number, level: number): number {
  return ((longitude + 180) / 360) * 2 ** level;
}

/** Web-Mercator tile-space y (fractional, growing south) of a latitude at `level`, clamped to the Mercator limit. */
export function mercatorY(latitude: number, level: number): number {
  const clamped = Math.max(-MERCATOR_MAX_LATITUDE, Math.min(MERCATOR_MAX_LATITUDE, latitude));
  const radians = (clamped * Math.PI) / 180;
  return ((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * 2 ** level;
}
