// The exact spatial test of a read (SpatialFilter), for storage engines that cannot run it in SQL.
import type { SpatialFilter, SpatialRelation } from './spatial-filter.js';
import { toJsts } from './jsts-geometry.js';
import { geometryBBox, type BBox } from './bbox.js';
import { SphericalGeometry } from './geodesic-distance.js';
import type { Geometry } from './geometry.js';
import { PreparedGeometry } from './prepared-geometry.js';

export type GeometryPredicate = (geometry: Geometry) => boolean;

function boxesMeet(a: BBox, b: BBox): boolean {
  return a[0] <= b[2] && a[2] >= b[0] && a[1] <= b[3] && a[3] >= b[1];
}

function boxHolds(outer: BBox, inner: BBox): boolean {
  return outer[0] <= inner[0] && outer[2] >= inner[2] && outer[1] <= inner[1] && outer[3] >= inner[3];
}

/** The box as a polygon; a box without width or height still works, as a line or point of the boundary. */
export function boxPolygon(box: BBox): Geometry {
  const [west, south, east, north] = box;
  return { type: 'Polygon', coordinates: [[[west, south], [east, south], [east, north], [west, north], [west, south]]] };
}

function boxPredicate(box: BBox): GeometryPredicate {
  let prepared: PreparedGeometry | undefined;
  return (geometry) => {
    if (geometry.type === 'Point') {
      const [longitude, latitude] = geometry.coordinates;
      return longitude >= box[0] && longitude <= box[2] && latitude >= box[1] && latitude <= box[3];
    }
    const bounds = geometryBBox(geometry);
    if (bounds === null || !boxesMeet(box, bounds)) return false;
    if (boxHolds(box, bounds)) return true;
    prepared ??= new PreparedGeometry(boxPolygon(box));
    return prepared.intersects(geometry);
  };
}

function geometryPredicate(reference: Geometry): GeometryPredicate {
  const referenceBounds = geometryBBox(reference);
  if (referenceBounds === null) return () => false;
  const prepared = new PreparedGeometry(reference);
  return (geometry) => {
    const bounds = geometryBBox(geometry);
    return bounds !== null && boxesMeet(referenceBounds, bounds) && prepared.intersects(geometry);
  };
}

/**
 * A DE-9IM relation by JSTS's RelateOp, the port of what GEOS (PostGIS) computes, after the test of the bounds that
 * every relation but disjoint needs: two geometries whose boxes do not meet are disjoint and nothing else.
 */
function relationPredicate(reference: Geometry, relation: SpatialRelation): GeometryPredicate {
  const referenceBounds = geometryBBox(reference);
  if (referenceBounds === null) return () => false;
  const intersects = geometryPredicate(reference);
  if (relation === 'disjoint') return (geometry) => !intersects(geometry);
  const jstsReference = toJsts(reference);
  const holds = {
    within: (bounds: BBox) => boxHolds(referenceBounds, bounds),
    equals: (bounds: BBox) => boxHolds(referenceBounds, bounds) && boxHolds(bounds, referenceBounds),
    contains: (bounds: BBox) => boxHolds(bounds, referenceBounds),
    touches: () => true,
    crosses: () => true,
    overlaps: () => true,
  }[relation];
  return (geometry) => {
    const bounds = geometryBBox(geometry);
    if (bounds === null || !boxesMeet(referenceBounds, bounds) || !holds(bounds)) return false;
    const tested = toJsts(geometry);
    switch (relation) {
      case 'within': return tested.within(jstsReference);
      case 'contains': return tested.contains(jstsReference);
      case 'equals': return tested.equalsTopo(jstsReference);
      case 'touches': return tested.touches(jstsReference);
      case 'crosses': return tested.crosses(jstsReference);
      case 'overlaps': return tested.overlaps(jstsReference);
    }
  };
}

function distancePredicate(reference: Geometry, radius: number): GeometryPredicate {
  const prepared = new SphericalGeometry(reference);
  return (geometry) => prepared.distanceTo(new SphericalGeometry(geometry)) <= radius;
}

/**
 * The test a stored geometry must pass to match the filter, exactly as PostGIS decides it: `box` and
 * `geometry` like `ST_Intersects` on `geometry(…, 4326)` (planar on lon/lat, boundaries included),
 * `distance` like `ST_DWithin` on `geography` (WGS 84 spheroid); a `relation` as its PostGIS function. Everything costly about the
 * reference is prepared once, here, since the predicate runs for many features.
 */
export function spatialPredicate(filter: SpatialFilter): GeometryPredicate {
  switch (filter.kind) {
    case 'box':
      return boxPredicate(filter.box);
    case 'geometry':
      return filter.relation ? relationPredicate(filter.geometry, filter.relation) : geometryPredicate(filter.geometry);
    case 'distance':
      return distancePredicate(filter.geometry, filter.radius);
  }
}
