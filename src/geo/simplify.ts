// Geometry simplification for display (`tweaks=simplification`): JSTS's Douglas-Peucker that keeps the topology.
import TopologyPreservingSimplifier from 'jsts/org/locationtech/jts/simplify/TopologyPreservingSimplifier.js';
import type { Geometry } from './geometry.js';
import { dimensionOf, fromJsts, toJsts } from './jsts-geometry.js';

/**
 * The geometry with vertices dropped while it stays within `tolerance` degrees of the original; rings
 * neither collapse nor cross. Points come back as they are; the result is 2D.
 */
export function simplify(geometry: Geometry, tolerance: number): Geometry {
  if (tolerance <= 0 || dimensionOf(geometry) === 0) return geometry;
  return fromJsts(TopologyPreservingSimplifier.simplify(toJsts(geometry), tolerance), dimensionOf(geometry)) ?? geometry;
}
