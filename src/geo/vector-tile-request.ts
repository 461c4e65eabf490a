// What a vector-tile read asks of storage: the tile, how its coordinates map to MVT tile space, and the attribute shape.
import type { BBox } from './bbox.js';

/**
 * `mercator`: EPSG:3857 tile coordinates (web, quadkey and tms tiles). `geographic`: lon/lat mapped linearly
 * onto the tile (here tiles, which are squares in degrees), so a here tile keeps its own grid.
 */
export type TileProjection = 'mercator' | 'geographic';

export interface VectorTileRequest {
  /** The MVT layer name: the space id. */
  layer: string;
  /** The tile itself (not enlarged by a margin), W,S,E,N in degrees: one tile of the power-of-two grid of its projection. */
  bounds: BBox;
  projection: TileProjection;
  /** Tile-space units across the tile (4096). */
  extent: number;
  /** Tile-space units kept beyond each edge when clipping (64 + 16 × margin). */
  buffer: number;
  /** `.mvtf`: attributes are `properties.<dotted.path>` leaves instead of top-level properties with nested ones as JSON text. */
  flatten: boolean;
}
