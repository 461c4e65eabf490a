// Distances on the WGS 84 spheroid the way PostGIS geography measures them: closest points on the sphere, great-circle edges.
import geographiclib from 'geographiclib-geodesic';
import type { BBox } from './bbox.js';
import type { Geometry, Position } from './geometry.js';

const WGS84 = geographiclib.Geodesic.WGS84;
const DEGREE = Math.PI / 180;

// The least metres per radian anywhere on WGS 84 (the meridian's radius of curvature at the equator,
// a(1 - e²)): an angle derived from it is never smaller than the true one, so bounds never fall short.
const LEAST_RADIUS = 6335439;
const BOUNDS_MARGIN = 1.01;

type Vector = [number, number, number];

function toVector(position: Position): Vector {
  const longitude = position[0] * DEGREE;
  const latitude = position[1] * DEGREE;
  const cosLatitude = Math.cos(latitude);
  return [cosLatitude * Math.cos(longitude), cosLatitude * Math.sin(longitude), Math.sin(latitude)];
}

function latitudeOf(v: Vector): number {
  return Math.atan2(v[2], Math.hypot(v[0], v[1])) / DEGREE;
}

function longitudeOf(v: Vector): number {
  return Math.atan2(v[1], v[0]) / DEGREE;
}

function dot(a: Vector, b: Vector): number {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}

function cross(a: Vector, b: Vector): Vector {
  return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
}

function length(v: Vector): number {
  return Math.hypot(v[0], v[1], v[2]);
}

function scaled(v: Vector, factor: number): Vector {
  return [v[0] * factor, v[1] * factor, v[2] * factor];
}

/** The angle between two unit vectors, accurate also for tiny and near-straight angles. */
function angle(a: Vector, b: Vector): number {
  return Math.atan2(length(cross(a, b)), dot(a, b));
}

/** A geometry on the unit sphere: points, open lines and polygons (rings), as unit vectors. */
interface SphericalParts {
  points: Vector[];
  lines: Vector[][];
  polygons: Vector[][][];
}

function sphericalParts(geometry: Geometry): SphericalParts {
  const line = (positions: Position[]) => positions.map(toVector);
  switch (geometry.type) {
    case 'Point':
      return { points: [toVector(geometry.coordinates)], lines: [], polygons: [] };
    case 'MultiPoint':
      return { points: line(geometry.coordinates), lines: [], polygons: [] };
    case 'LineString':
      return { points: [], lines: [line(geometry.coordinates)], polygons: [] };
    case 'MultiLineString':
      return { points: [], lines: geometry.coordinates.map(line), polygons: [] };
    case 'Polygon':
      return { points: [], lines: [], polygons: [geometry.coordinates.map(line)] };
    case 'MultiPolygon':
      return { points: [], lines: [], polygons: geometry.coordinates.map((polygon) => polygon.map(line)) };
  }
}

/** A pair of closest points found so far and their angle. */
interface Closest {
  angle: number;
  a: Vector;
  b: Vector;
}

/** Whether `point` lies on the great-circle arc from `a` to `b` (whose normal is `normal`), given it lies on that circle. */
function withinArc(point: Vector, a: Vector, b: Vector, normal: Vector): boolean {
  return dot(cross(a, point), normal) >= 0 && dot(cross(point, b), normal) >= 0;
}

/** The point of the arc from `a` to `b` closest to `p`. */
function closestOnArc(p: Vector, a: Vector, b: Vector): Vector {
  const normal = cross(a, b);
  const normalLength = length(normal);
  if (normalLength > 1e-15) {
    const unitNormal = scaled(normal, 1 / normalLength);
    const projected = scaled(unitNormal, dot(p, unitNormal));
    const onCircle: Vector = [p[0] - projected[0], p[1] - projected[1], p[2] - projected[2]];
    const onCircleLength = length(onCircle);
    if (onCircleLength > 1e-15) {
      const candidate = scaled(onCircle, 1 / onCircleLength);
      if (withinArc(candidate, a, b, normal)) return candidate;
    }
  }
  return angle(p, a) <= angle(p, b) ? a : b;
}

/** Where two arcs cross, or undefined; arcs on one great circle are left to the endpoint tests. */
function arcCrossing(a1: Vector, b1: Vector, a2: Vector, b2: Vector): Vector | undefined {
  const normal1 = cross(a1, b1);
  const normal2 = cross(a2, b2);
  const line = cross(normal1, normal2);
  const lineLength = length(line);
  if (lineLength <= 1e-15) return undefined;
  for (const candidate of [scaled(line, 1 / lineLength), scaled(line, -1 / lineLength)]) {
    if (withinArc(candidate, a1, b1, normal1) && withinArc(candidate, a2, b2, normal2)) return candidate;
  }
  return undefined;
}

function consider(closest: Closest, a: Vector, b: Vector): void {
  const between = angle(a, b);
  if (between < closest.angle) {
    closest.angle = between;
    closest.a = a;
    closest.b = b;
  }
}

/** Arcs (consecutive vertex pairs) of a line or ring; a single vertex stands for itself. */
function pointToPath(closest: Closest, p: Vector, path: Vector[], pointFirst: boolean): void {
  if (path.length === 1) {
    if (pointFirst) consider(closest, p, path[0]);
    else consider(closest, path[0], p);
    return;
  }
  for (let index = 1; index < path.length && closest.angle > 0; index++) {
    const onArc = closestOnArc(p, path[index - 1], path[index]);
    if (pointFirst) consider(closest, p, onArc);
    else consider(closest, onArc, p);
  }
}

function pathToPath(closest: Closest, first: Vector[], second: Vector[]): void {
  if (first.length === 1 || second.length === 1) {
    if (first.length === 1) pointToPath(closest, first[0], second, true);
    else pointToPath(closest, second[0], first, false);
    return;
  }
  for (let i = 1; i < first.length && closest.angle > 0; i++) {
    for (let j = 1; j < second.length && closest.angle > 0; j++) {
      const crossing = arcCrossing(first[i - 1], first[i], second[j - 1], second[j]);
      if (crossing !== undefined) {
        closest.angle = 0;
        closest.a = crossing;
        closest.b = crossing;
        return;
      }
    }
  }
  // Arcs that do not cross are closest at an endpoint of one of them.
  for (const p of first) pointToPath(closest, p, second, true);
  for (const p of second) pointToPath(closest, p, first, false);
}

/**
 * Whether `p` is inside a ring with great-circle edges, by the angles the edges sweep around `p` in its
 * tangent plane (a full turn inside, nothing outside). Only for polygons no hemisphere holds, as an edge
 * passing near the antipode of `p` can sweep the wrong way.
 */
function inRingByWinding(p: Vector, ring: Vector[]): boolean {
  let turn = 0;
  let previous = tangent(p, ring[0]);
  for (let index = 1; index < ring.length; index++) {
    const current = tangent(p, ring[index]);
    turn += Math.atan2(dot(p, cross(previous, current)), dot(previous, current));
    previous = current;
  }
  return Math.abs(turn) > Math.PI;
}

function tangent(p: Vector, v: Vector): Vector {
  const along = dot(p, v);
  return [v[0] - along * p[0], v[1] - along * p[1], v[2] - along * p[2]];
}

/** Planar even-odd ray crossing on projected coordinates (x, y pairs). */
function inPlanarRing(x: number, y: number, ring: Float64Array): boolean {
  let inside = false;
  for (let index = 2; index < ring.length; index += 2) {
    const x1 = ring[index - 2];
    const y1 = ring[index - 1];
    const x2 = ring[index];
    const y2 = ring[index + 1];
    if ((y1 > y) !== (y2 > y) && x < x1 + ((y - y1) * (x2 - x1)) / (y2 - y1)) inside = !inside;
  }
  return inside;
}

/**
 * Point-in-polygon on the sphere. A polygon within the hemisphere around its vertices' centre is
 * projected gnomonically from that centre, which maps great-circle edges to straight lines, so the
 * planar test is exact; a point outside that hemisphere is outside the polygon.
 */
function inPolygon(p: Vector, polygon: Vector[][]): boolean {
  if (polygon.length === 0 || polygon[0].length < 4) return false;
  const shell = polygon[0];
  const sum: Vector = [0, 0, 0];
  for (const v of shell) {
    sum[0] += v[0];
    sum[1] += v[1];
    sum[2] += v[2];
  }
  const sumLength = length(sum);
  const centre = scaled(sum, 1 / sumLength);
  if (sumLength < 1e-9 || polygon.some((ring) => ring.some((v) => dot(v, centre) <= 1e-9))) {
    if (!inRingByWinding(p, shell)) return false;
    for (let index = 1; index < polygon.length; index++) if (inRingByWinding(p, polygon[index])) return false;
    return true;
  }
  const height = dot(p, centre);
  if (height <= 0) return false;
  // Any axis not parallel to the centre gives a basis of the tangent plane.
  const axis: Vector = Math.abs(centre[0]) < 0.6 ? [1, 0, 0] : Math.abs(centre[1]) < 0.6 ? [0, 1, 0] : [0, 0, 1];
  const first = cross(centre, axis);
  const e1 = scaled(first, 1 / length(first));
  const e2 = cross(centre, e1);
  const project = (ring: Vector[]): Float64Array => {
    const projected = new Float64Array(ring.length * 2);
    ring.forEach((v, index) => {
      const h = dot(v, centre);
      projected[index * 2] = dot(v, e1) / h;
      projected[index * 2 + 1] = dot(v, e2) / h;
    });
    return projected;
  };
  const x = dot(p, e1) / height;
  const y = dot(p, e2) / height;
  if (!inPlanarRing(x, y, project(shell))) return false;
  for (let index = 1; index < polygon.length; index++) if (inPlanarRing(x, y, project(polygon[index]))) return false;
  return true;
}

/** Vertices from which to test containment: one per component is enough once no edges meet, but any vertex will do. */
function firstVertices(parts: SphericalParts): Vector[] {
  return [
    ...parts.points,
    ...parts.lines.filter((line) => line.length > 0).map((line) => line[0]),
    ...parts.polygons.filter((polygon) => polygon.length > 0 && polygon[0].length > 0).map((polygon) => polygon[0][0]),
  ];
}

function paths(parts: SphericalParts): Vector[][] {
  return [...parts.points.map((point) => [point]), ...parts.lines, ...parts.polygons.flat()];
}

/** A geometry prepared for repeated distance measurements. */
export class SphericalGeometry {
  readonly parts: SphericalParts;
  readonly paths: Vector[][];
  readonly vertices: Vector[];

  constructor(geometry: Geometry) {
    this.parts = sphericalParts(geometry);
    this.paths = paths(this.parts).filter((path) => path.length > 0);
    this.vertices = firstVertices(this.parts);
  }

  /** The two closest points of both geometries on the sphere, or undefined when one of them is empty. */
  closestPoints(other: SphericalGeometry): Closest | undefined {
    if (this.paths.length === 0 || other.paths.length === 0) return undefined;
    for (const polygon of other.parts.polygons) {
      for (const vertex of this.vertices) if (inPolygon(vertex, polygon)) return { angle: 0, a: vertex, b: vertex };
    }
    for (const polygon of this.parts.polygons) {
      for (const vertex of other.vertices) if (inPolygon(vertex, polygon)) return { angle: 0, a: vertex, b: vertex };
    }
    const closest: Closest = { angle: Infinity, a: this.paths[0][0], b: other.paths[0][0] };
    for (const path of this.paths) {
      for (const otherPath of other.paths) {
        pathToPath(closest, path, otherPath);
        if (closest.angle === 0) return closest;
      }
    }
    return closest;
  }

  /** Metres on WGS 84 between the closest points; Infinity when either geometry is empty. */
  distanceTo(other: SphericalGeometry): number {
    const closest = this.closestPoints(other);
    if (closest === undefined) return Infinity;
    if (closest.angle === 0) return 0;
    const { a, b } = closest;
    return WGS84.Inverse(latitudeOf(a), longitudeOf(a), latitudeOf(b), longitudeOf(b), geographiclib.Geodesic.DISTANCE).s12 ?? Infinity;
  }
}

/**
 * Metres between two geometries like PostGIS `ST_Distance(a::geography, b::geography)` (spheroid):
 * 0 when they meet or one lies inside the other; Infinity when either has no positions.
 */
export function geodesicDistance(a: Geometry, b: Geometry): number {
  return new SphericalGeometry(a).distanceTo(new SphericalGeometry(b));
}

/** The latitude range a great-circle arc reaches, which can exceed its endpoints' (towards a pole). */
function arcLatitudes(a: Vector, b: Vector): [number, number] {
  let south = Math.min(latitudeOf(a), latitudeOf(b));
  let north = Math.max(latitudeOf(a), latitudeOf(b));
  const normal = cross(a, b);
  const normalLength = length(normal);
  if (normalLength > 1e-15) {
    const unitNormal = scaled(normal, 1 / normalLength);
    // The circle's highest point is the pole's direction with its component along the normal removed.
    const top: Vector = [-unitNormal[2] * unitNormal[0], -unitNormal[2] * unitNormal[1], 1 - unitNormal[2] * unitNormal[2]];
    const topLength = length(top);
    if (topLength > 1e-15) {
      const highest = scaled(top, 1 / topLength);
      if (withinArc(highest, a, b, normal)) north = Math.max(north, latitudeOf(highest));
      const lowest = scaled(highest, -1);
      if (withinArc(lowest, a, b, normal)) south = Math.min(south, latitudeOf(lowest));
    }
  }
  return [south, north];
}

/**
 * Engines find candidates by each stored feature's vertex bounding box, but great-circle edges bulge
 * poleward out of it: a polygon round a pole drawn without a vertex there (Antarctica stops at -85.6°)
 * holds the pole. So a search box reaching beyond POLAR_CAP takes in every longitude down to POLAR_REACH,
 * and the exact test decides. An edge whose vertices stay below 60° and that still reaches 80° spans
 * more than 144° of longitude; docs/decisions.md, "Spatial predicates".
 */
const POLAR_CAP = 80;
const POLAR_REACH = 60;

function withPolarCaps([west, south, east, north]: BBox): BBox {
  if (north > POLAR_CAP) return withPolarCapSouth([-180, Math.min(south, POLAR_REACH), 180, north]);
  return withPolarCapSouth([west, south, east, north]);
}

function withPolarCapSouth([west, south, east, north]: BBox): BBox {
  return south < -POLAR_CAP ? [-180, south, 180, Math.max(north, -POLAR_REACH)] : [west, south, east, north];
}

/**
 * An axis-aligned lon/lat box holding every point within `radius` metres of the geometry (with its
 * great-circle edges), and every stored feature that may reach it (see POLAR_CAP). It never falls short:
 * near a pole it spans all longitudes up to that pole, and when it would cross the antimeridian it spans
 * all longitudes.
 */
export function distanceBounds(geometry: Geometry, radius: number): BBox {
  return withPolarCaps(circleBounds(geometry, radius));
}

function circleBounds(geometry: Geometry, radius: number): BBox {
  let west = Infinity;
  let east = -Infinity;
  let south = Infinity;
  let north = -Infinity;
  let crossesAntimeridian = false;
  for (const path of paths(sphericalParts(geometry))) {
    for (let index = 0; index < path.length; index++) {
      const longitude = longitudeOf(path[index]);
      west = Math.min(west, longitude);
      east = Math.max(east, longitude);
      if (index > 0) {
        const [arcSouth, arcNorth] = arcLatitudes(path[index - 1], path[index]);
        south = Math.min(south, arcSouth);
        north = Math.max(north, arcNorth);
        if (Math.abs(longitude - longitudeOf(path[index - 1])) > 180) crossesAntimeridian = true;
      } else {
        south = Math.min(south, latitudeOf(path[index]));
        north = Math.max(north, latitudeOf(path[index]));
      }
    }
  }
  if (west === Infinity) return [0, 0, 0, 0];
  const reach = (Math.max(radius, 0) / LEAST_RADIUS) * BOUNDS_MARGIN;
  const reachDegrees = reach / DEGREE;
  const boxSouth = Math.max(-90, south - reachDegrees);
  const boxNorth = Math.min(90, north + reachDegrees);
  const farthestLatitude = Math.max(Math.abs(south), Math.abs(north)) * DEGREE;
  const sinReach = Math.sin(Math.min(reach, Math.PI / 2));
  const cosLatitude = Math.cos(Math.min(farthestLatitude, Math.PI / 2));
  // The circle reaches round a pole (then the clamped latitude on that side is ±90): every longitude.
  if (reach >= Math.PI / 2 || sinReach >= cosLatitude) return [-180, boxSouth, 180, boxNorth];
  const reachLongitude = Math.asin(sinReach / cosLatitude) / DEGREE;
  if (crossesAntimeridian || west - reachLongitude < -180 || east + reachLongitude > 180) return [-180, boxSouth, 180, boxNorth];
  return [west - reachLongitude, boxSouth, east + reachLongitude, boxNorth];
}
