// Tile ids of the four tile schemes (API.md 6.2): parsing, bounds and margin-enlarged bounds.
import { hubError } from '../core/errors.js';
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

const SCHEMES: readonly string[] = ['quadkey', 'web', 'tms', 'here'];
const QUADKEY = /^[0-3]{1,31}$/;
const LEVEL_X_Y = /^(\d{1,10})_(\d{1,10})_(\d{1,10})$/;
const DECIMAL = /^\d{1,20}$/;

/** Parses `{type}/{tileId}` of the tile route; throws the 400s of API.md 6.2. */
export function parseTileId(type: string, tileId: string, hereEncoding: HereTileEncoding): Tile {
  if (!SCHEMES.includes(type)) throw hubError('invalidTileType', { type: JSON.stringify(type) });
  const scheme = type as TileScheme;
  const dot = tileId.indexOf('.');
  const id = dot < 0 ? tileId : tileId.slice(0, dot);
  const format = formatOf(dot < 0 ? '' : tileId.slice(dot + 1));
  const fail = (problem: string) => hubError('invalidTileId', { problem });
  switch (scheme) {
    case 'quadkey': {
      if (!QUADKEY.test(id)) throw fail(`A quadkey tile id is 1 to ${MAX_TILE_LEVEL} digits 0-3; got "${id}".`);
      return { scheme, format, ...fromQuadkey(id) };
    }
    case 'web':
    case 'tms': {
      const { level, x, y } = levelXY(id, scheme, fail);
      const size = 2 ** level;
      if (x >= size || y >= size) throw fail(`At level ${level} x and y must be below ${size}; got "${id}".`);
      return { scheme, format, level, x, y: scheme === 'tms' ? size - 1 - y : y };
    }
    case 'here':
      return { scheme, format, ...hereTile(id, hereEncoding, fail) };
  }
}

function formatOf(suffix: string): TileFormat {
  if (suffix === 'mvt' || suffix === 'mvt2') return 'mvt';
  if (suffix === 'mvtf' || suffix === 'mvtf2') return 'mvtf';
  return 'geojson';
}

type Cell = { level: number; x: number; y: number };
type Fail = (problem: string) => Error;

function levelXY(id: string, scheme: TileScheme, fail: Fail): Cell {
  const match = LEVEL_X_Y.exec(id);
  if (match === null) throw fail(`A ${scheme} tile id is level_x_y (three non-negative integers joined by "_"); got "${id}".`);
  const level = Number(match[1]);
  if (level > MAX_TILE_LEVEL) throw fail(`The level must be at most ${MAX_TILE_LEVEL}; got ${level}.`);
  return { level, x: Number(match[2]), y: Number(match[3]) };
}

/** Digits most significant first, each `xbit + 2*ybit` (API.md 6.2). */
function fromQuadkey(quadkey: string): Cell {
  let x = 0;
  let y = 0;
  for (const char of quadkey) {
    const digit = char.charCodeAt(0) - 48;
    x = x * 2 + (digit & 1);
    y = y * 2 + (digit >> 1);
  }
  return { level: quadkey.length, x, y };
}

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
 * tms: slippy-map, y = 0 at the north; here: geographic, y = 0 at the south): the inverse of parseTileId without a
 * format suffix. `here` tiles are named by their quadkey, in the hub's configured encoding.
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
      // The decimal form is the quadkey in base 4 behind a level-marker digit 1 (see decimalToQuadkey).
      let value = 1n;
      for (const digit of quadkey) value = value * 4n + BigInt(digit);
      return value.toString();
    }
  }
}

function hereTile(id: string, encoding: HereTileEncoding, fail: Fail): Cell {
  let cell: Cell;
  if (id.includes('_')) {
    cell = levelXY(id, 'here', fail);
    if (cell.level < 1) throw fail(`A here tile level is 1 to ${MAX_TILE_LEVEL}; got 0.`);
    if (cell.x > 2 ** cell.level - 1) throw fail(`At level ${cell.level} x must be at most ${2 ** cell.level - 1}; got "${id}".`);
  } else {
    const quadkey = encoding === 'base4' ? id : decimalToQuadkey(id, fail);
    if (!QUADKEY.test(quadkey)) throw fail(`A here tile id is a quadkey of 1 to ${MAX_TILE_LEVEL} digits 0-3; got "${id}".`);
    cell = fromQuadkey(quadkey);
  }
  // (2^L − 1) div 2 = 2^(L−1) − 1: the geographic grid has half as many rows as columns.
  const maxY = 2 ** (cell.level - 1) - 1;
  if (cell.y > maxY) throw fail(`At level ${cell.level} y must be at most ${maxY}; got "${id}".`);
  return cell;
}

/** Decimal form: the id in base 4 is a level-marker digit `1` followed by the quadkey. */
function decimalToQuadkey(id: string, fail: Fail): string {
  if (!DECIMAL.test(id)) throw fail(`A here tile id is a decimal integer (or level_x_y); got "${id}".`);
  const base4 = BigInt(id).toString(4);
  if (base4[0] !== '1' || base4.length < 2) {
    throw fail(`The decimal here tile id ${id} has no level marker (in base 4 it is ${base4}, which must be 1 followed by the quadkey).`);
  }
  return base4.slice(1);
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
