// The area of an OGC bbox (the items parameter or a CQL2 BBOX literal) as a spatial filter.
import type { SpatialFilter } from '../../geo/spatial-filter.js';
import type { BBox } from '../../geo/bbox.js';
import type { Position } from '../../geo/geometry.js';

/**
 * A box whose west edge lies east of its east edge crosses the antimeridian (OGC API Features 7.15.3):
 * it becomes the two boxes on either side, as one MultiPolygon.
 */
export function areaOf(box: BBox): SpatialFilter {
  const [west, south, east, north] = box;
  if (west <= east) return { kind: 'box', box };
  const ring = (w: number, e: number): Position[][] => [[[w, south], [e, south], [e, north], [w, north], [w, south]]];
  return { kind: 'geometry', geometry: { type: 'MultiPolygon', coordinates: [ring(west, 180), ring(-180, east)] }, bounds: [-180, south, 180, north] };
}
