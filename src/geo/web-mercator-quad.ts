// The OGC WebMercatorQuad tile matrix set (OGC 17-083r4, annex D.1): the web tile grid as OGC API Tiles names and defines it.
import type { BBox } from './bbox.js';
import { MERCATOR_MAX_LATITUDE, mercatorX, mercatorY } from './tile-schemes.js';

export const WEB_MERCATOR_QUAD = 'WebMercatorQuad';
export const WEB_MERCATOR_QUAD_URI = 'http://www.opengis.net/def/tilematrixset/OGC/1.0/WebMercatorQuad';
export const EPSG_3857 = 'http://www.opengis.net/def/crs/EPSG/0/3857';

/** Half the EPSG:3857 world's width in metres (π × 6,378,137). */
const HALF_WORLD = 20037508.3427892;
/** The standard pixel of OGC scale denominators: 0.28 mm. */
const STANDARD_PIXEL = 0.00028;
const TILE_SIZE = 256;

/** The world in lon/lat as far as Web-Mercator tiles reach: W, S, E, N. */
export const WEB_MERCATOR_WORLD: [number, number, number, number] = [-180, -MERCATOR_MAX_LATITUDE, 180, MERCATOR_MAX_LATITUDE];

interface TileMatrix {
  id: string;
  scaleDenominator: number;
  cellSize: number;
  cornerOfOrigin: 'topLeft';
  pointOfOrigin: [number, number];
  tileWidth: number;
  tileHeight: number;
  matrixWidth: number;
  matrixHeight: number;
}

/** Tile matrix `level`: 2^level × 2^level tiles of 256 pixels over the EPSG:3857 square. */
function tileMatrix(level: number): TileMatrix {
  const cellSize = (2 * HALF_WORLD) / TILE_SIZE / 2 ** level;
  return {
    id: String(level), scaleDenominator: cellSize / STANDARD_PIXEL, cellSize, cornerOfOrigin: 'topLeft',
    pointOfOrigin: [-HALF_WORLD, HALF_WORLD], tileWidth: TILE_SIZE, tileHeight: TILE_SIZE, matrixWidth: 2 ** level, matrixHeight: 2 ** level,
  };
}

/**
 * The definition in the OGC Two Dimensional Tile Matrix Set JSON encoding, tile matrices 0 to `maxLevel`. It holds the
 * members of version 2.0 (`id`, `crs`, `tileMatrices` with `pointOfOrigin`), which OGC API Tiles names, and those of
 * version 1.0 (`identifier`, `supportedCRS`, `tileMatrix` with `topLeftCorner`), the only ones GDAL 3.6 and QGIS 3.22
 * read: each reader takes its own and ignores the others'.
 */
export function webMercatorQuad(maxLevel: number): object {
  const matrices = Array.from({ length: maxLevel + 1 }, (_, level) => tileMatrix(level));
  const corners = { lowerLeft: [-HALF_WORLD, -HALF_WORLD], upperRight: [HALF_WORLD, HALF_WORLD] };
  return {
    id: WEB_MERCATOR_QUAD,
    title: 'Google Maps Compatible for the World',
    uri: WEB_MERCATOR_QUAD_URI,
    crs: EPSG_3857,
    orderedAxes: ['X', 'Y'],
    wellKnownScaleSet: 'http://www.opengis.net/def/wkss/OGC/1.0/GoogleMapsCompatible',
    boundingBox: { type: 'BoundingBoxType', crs: EPSG_3857, ...corners, lowerCorner: corners.lowerLeft, upperCorner: corners.upperRight },
    tileMatrices: matrices.map((matrix) => ({ ...matrix, topLeftCorner: matrix.pointOfOrigin })),
    type: 'TileMatrixSetType',
    identifier: WEB_MERCATOR_QUAD,
    supportedCRS: EPSG_3857,
    tileMatrix: matrices.map((matrix) => ({
      type: 'TileMatrixType', identifier: matrix.id, scaleDenominator: matrix.scaleDenominator, topLeftCorner: matrix.pointOfOrigin,
      tileWidth: matrix.tileWidth, tileHeight: matrix.tileHeight, matrixWidth: matrix.matrixWidth, matrixHeight: matrix.matrixHeight,
    })),
  };
}

/** The rows and columns of tile matrix `tileMatrix` that hold part of a box (OGC TileMatrixLimits). */
export interface TileMatrixLimits {
  tileMatrix: string;
  minTileRow: number;
  maxTileRow: number;
  minTileCol: number;
  maxTileCol: number;
}

/**
 * The tiles of each level 0 to `maxLevel` that meet `box` (W, S, E, N in degrees): a tile whose edge the box only
 * touches is included, as a tile read includes what lies on its edge.
 */
export function tileMatrixLimits(box: BBox, maxLevel: number): TileMatrixLimits[] {
  const [west, south, east, north] = box;
  return Array.from({ length: maxLevel + 1 }, (_, level) => {
    const last = 2 ** level - 1;
    const index = (value: number) => Math.min(last, Math.max(0, Math.floor(value)));
    return {
      tileMatrix: String(level),
      minTileRow: index(mercatorY(north, level)), maxTileRow: index(mercatorY(south, level)),
      minTileCol: index(mercatorX(west, level)), maxTileCol: index(mercatorX(east, level)),
    };
  });
}
