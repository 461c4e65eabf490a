// Cuts geometries to a box or to another geometry (planar on lon/lat), for `clip=true` reads.
import { geometryBBox, type BBox } from './bbox.js';
import { force2D } from './coordinates.js';
import type { Geometry, Position } from './geometry.js';
import type JstsGeometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
import { dimensionOf, fromJsts, toJsts } from './jsts-geometry.js';
import { boxPolygon } from './spatial-predicate.js';

function inBox(position: Position, box: BBox): boolean {
  return position[0] >= box[0] && position[0] <= box[2] && position[1] >= box[1] && position[1] <= box[3];
}

/**
 * A polygon JSTS can overlay: writes accept self-crossing rings (a bow tie), which make the overlay throw.
 * Such a polygon is repaired the usual way, by a buffer of width 0; lines and points stay as they are.
 */
function repaired(geometry: JstsGeometry): JstsGeometry {
  return geometry.getDimension() === 2 && !geometry.isValid() ? geometry.buffer(0) : geometry;
}

/**
 * The part of `geometry` that lies in `clipper` (planar intersection), of the geometry's own dimension:
 * a polygon cut in two becomes a MultiPolygon, a polygon meeting the clipper only along an edge gives
 * nothing. Undefined when nothing remains. The result is 2D. An invalid polygon is repaired first; a
 * geometry that still cannot be cut comes back whole rather than failing the read.
 */
export function clipToGeometry(geometry: Geometry, clipper: Geometry): Geometry | undefined {
  const subject = toJsts(geometry);
  const mask = toJsts(clipper);
  try {
    return fromJsts(subject.intersection(mask), dimensionOf(geometry));
  } catch {
    try {
      return fromJsts(repaired(subject).intersection(repaired(mask)), dimensionOf(geometry));
    } catch {
      return force2D(geometry);
    }
  }
}

/** clipToGeometry with a box; a geometry wholly inside the box comes back with its positions (in 2D), without an overlay. */
export function clipToBox(geometry: Geometry, box: BBox): Geometry | undefined {
  const bounds = geometryBBox(geometry);
  if (bounds === null) return undefined;
  if (inBox([bounds[0], bounds[1]], box) && inBox([bounds[2], bounds[3]], box)) return force2D(geometry);
  if (geometry.type === 'Point') return undefined;
  if (geometry.type === 'MultiPoint') {
    const inside = geometry.coordinates.filter((position) => inBox(position, box)).map((position): Position => [position[0], position[1]]);
    if (inside.length === 0) return undefined;
    return inside.length === 1 ? { type: 'Point', coordinates: inside[0] } : { type: 'MultiPoint', coordinates: inside };
  }
  return clipToGeometry(geometry, boxPolygon(box));
}
