// Quadbin clustering (API.md 6.4): features counted per Web-Mercator quadtree cell of the area.
import type { BBox } from '../../geo/bbox.js';
import { MAX_TILE_LEVEL, mercatorBounds, mercatorX, mercatorY, quadkeyOf, type Tile } from '../../geo/tile-schemes.js';
import { spatialPredicate } from '../../geo/spatial-predicate.js';
import type { QuadbinRequest } from './clustering-options.js';
import { decimalCellId } from './cell-ids.js';
import { featureBBox, type ClusteredFeature } from './clustered-feature.js';

/** Deepest cell level below the base level (API.md: relative resolution honoured up to 5). */
const MAX_QUADBIN_DEPTH = 5;
/** Cells of the area's grid at most; a deeper level that would exceed it is lowered, so a feature costs bounded work. */
const MAX_QUADBIN_CELLS = 4096;
/** Without `noBuffer`, each cell is shrunk by this share of its size on every side (one MVT extent unit). */
const CELL_INSET = 1 / 4096;

/** The base level of a bbox for quadbin: `ceil(log2(360 / width))`, within 0..31. */
export function quadbinBaseLevel(bbox: BBox): number {
  const width = Math.abs(bbox[2] - bbox[0]);
  if (width === 0) return MAX_TILE_LEVEL;
  return Math.min(MAX_TILE_LEVEL, Math.max(0, Math.ceil(Math.log2(360 / width))));
}

interface Grid {
  level: number;
  x0: number;
  y0: number;
  columns: number;
  rows: number;
}

export class QuadbinAggregator {
  /** Count per cell, keyed by the cell's position in the grid (row-major). */
  private readonly counts = new Map<number, number>();
  private readonly grid: Grid;
  private total = 0;

  constructor(private readonly request: QuadbinRequest, area: { bbox: BBox; tile?: Tile }, private readonly clipBox: BBox | undefined) {
    this.grid = areaGrid(request, area);
  }

  /**
   * Counts the feature in every cell of the grid its shape meets (a point in the one cell holding it);
   * `total_count` counts the features meeting any. A shape whose bounding box spans several cells is
   * tested against each of them with the exact planar intersects of the spatial reads.
   */
  add(feature: ClusteredFeature): void {
    const box = featureBBox(feature);
    if (box === null) return;
    const { level, x0, y0, columns, rows } = this.grid;
    const left = Math.max(x0, Math.floor(mercatorX(box[0], level)));
    const right = Math.min(x0 + columns - 1, Math.floor(mercatorX(box[2], level)));
    const top = Math.max(y0, Math.floor(mercatorY(box[3], level)));
    const bottom = Math.min(y0 + rows - 1, Math.floor(mercatorY(box[1], level)));
    if (left > right || top > bottom) return;
    const exact = feature.geometry.type !== 'Point' && (left < right || top < bottom);
    let counted = false;
    for (let y = top; y <= bottom; y++) {
      for (let x = left; x <= right; x++) {
        if (exact && !spatialPredicate({ kind: 'box', box: mercatorBounds(level, x, y, x + 1, y + 1) })(feature.geometry)) continue;
        const key = (y - y0) * columns + (x - x0);
        this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
        counted = true;
      }
    }
    if (counted) this.total++;
  }

  /** One feature per non-empty cell, row by row from the north-west. */
  features(): string[] {
    const { level, x0, y0, columns, rows } = this.grid;
    const equipartition = Math.round(this.total / (columns * rows));
    const inset = this.request.noBuffer ? 0 : CELL_INSET;
    const result: string[] = [];
    for (const key of [...this.counts.keys()].sort((a, b) => a - b)) {
      const x = x0 + (key % columns);
      const y = y0 + Math.floor(key / columns);
      let bounds = mercatorBounds(level, x + inset, y + inset, x + 1 - inset, y + 1 - inset);
      if (this.clipBox !== undefined) {
        const clipped = intersect(bounds, this.clipBox);
        if (clipped === undefined) continue;
        bounds = clipped;
      }
      const count = this.counts.get(key) as number;
      const [west, south, east, north] = bounds;
      const idKey = this.clipBox === undefined ? `${level}/${x}/${y}` : `${level}/${x}/${y}/${this.clipBox.join(',')}`;
      result.push(JSON.stringify({
        type: 'Feature',
        id: decimalCellId(idKey),
        geometry: { type: 'Polygon', coordinates: [[[west, south], [east, south], [east, north], [west, north], [west, south]]] },
        properties: {
          count: this.request.countmode === 'bool' ? 1 : count,
          qk: quadkeyOf(level, x, y),
          zxy: [level, x, y],
          xyz: `(${y},${x},${level})`,
          estimated: false,
          total_count: this.total,
          equipartition_count: equipartition,
        },
      }));
    }
    return result;
  }
}

/**
 * The cells of the area at the cell level: the tile's `4^res` children (more with a margin), or
 * every cell meeting the bbox. The level is lowered while the grid would exceed MAX_QUADBIN_CELLS.
 */
function areaGrid(request: QuadbinRequest, area: { bbox: BBox; tile?: Tile }): Grid {
  const base = area.tile?.level ?? quadbinBaseLevel(area.bbox);
  const wanted = request.absoluteResolution ?? base + request.relativeResolution;
  const floor = area.tile?.level ?? 0;
  let level = Math.min(MAX_TILE_LEVEL, base + MAX_QUADBIN_DEPTH, Math.max(floor, wanted));
  for (;;) {
    const grid = gridAt(area.bbox, level);
    if (grid.columns * grid.rows <= MAX_QUADBIN_CELLS || level <= floor) return grid;
    level--;
  }
}

function gridAt(bbox: BBox, level: number): Grid {
  const west = Math.min(bbox[0], bbox[2]);
  const east = Math.max(bbox[0], bbox[2]);
  const south = Math.min(bbox[1], bbox[3]);
  const north = Math.max(bbox[1], bbox[3]);
  const last = 2 ** level - 1;
  const x0 = Math.min(last, Math.floor(snap(mercatorX(west, level))));
  const x1 = Math.max(x0, Math.min(last, Math.ceil(snap(mercatorX(east, level))) - 1));
  const y0 = Math.min(last, Math.floor(snap(mercatorY(north, level))));
  const y1 = Math.max(y0, Math.min(last, Math.ceil(snap(mercatorY(south, level))) - 1));
  return { level, x0, y0, columns: x1 - x0 + 1, rows: y1 - y0 + 1 };
}

/** Tile bounds converted to tile space land a hair off the integer; treat those as the edge. */
function snap(value: number): number {
  const rounded = Math.round(value);
  return Math.abs(value - rounded) < 1e-9 ? rounded : value;
}

function intersect(a: BBox, b: BBox): BBox | undefined {
  const west = Math.max(a[0], Math.min(b[0], b[2]));
  const east = Math.min(a[2], Math.max(b[0], b[2]));
  const south = Math.max(a[1], Math.min(b[1], b[3]));
  const north = Math.min(a[3], Math.max(b[1], b[3]));
  return west < east && south < north ? [west, south, east, north] : undefined;
}
