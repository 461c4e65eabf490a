// Tile ids of the tile route (API.md 6.2) parsed into tiles, with the 400s the contract names for ids it does not take.
import { hubError } from './errors.js';
import { type HereTileEncoding, MAX_TILE_LEVEL, type Tile, type TileFormat, type TileScheme } from '../geo/tile-schemes.js';

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
