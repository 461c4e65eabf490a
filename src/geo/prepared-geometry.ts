// An exact planar intersects test against one reference geometry, indexed once and run for many geometries.
import ArrayList from 'jsts/java/util/ArrayList.js';
import IndexedPointInAreaLocator from 'jsts/org/locationtech/jts/algorithm/locate/IndexedPointInAreaLocator.js';
import PointLocation from 'jsts/org/locationtech/jts/algorithm/PointLocation.js';
import RayCrossingCounter from 'jsts/org/locationtech/jts/algorithm/RayCrossingCounter.js';
import Coordinate from 'jsts/org/locationtech/jts/geom/Coordinate.js';
import GeometryFactory from 'jsts/org/locationtech/jts/geom/GeometryFactory.js';
import GeoJSONReader from 'jsts/org/locationtech/jts/io/GeoJSONReader.js';
import BasicSegmentString from 'jsts/org/locationtech/jts/noding/BasicSegmentString.js';
import FastSegmentSetIntersectionFinder from 'jsts/org/locationtech/jts/noding/FastSegmentSetIntersectionFinder.js';
import type { Geometry, Position } from './geometry.js';

// JTS Location.EXTERIOR; interior (0) and boundary (1) both intersect.
const EXTERIOR = 2;

const reader = new GeoJSONReader(new GeometryFactory());

/** A geometry split into its points, open lines and polygons (rings), in JTS coordinates, 2D. */
interface Parts {
  points: Coordinate[];
  lines: Coordinate[][];
  polygons: Coordinate[][][];
}

function coordinates(positions: Position[]): Coordinate[] {
  return positions.map((position) => new Coordinate(position[0], position[1]));
}

function partsOf(geometry: Geometry): Parts {
  switch (geometry.type) {
    case 'Point':
      return { points: coordinates([geometry.coordinates]), lines: [], polygons: [] };
    case 'MultiPoint':
      return { points: coordinates(geometry.coordinates), lines: [], polygons: [] };
    case 'LineString':
      return { points: [], lines: geometry.coordinates.length > 0 ? [coordinates(geometry.coordinates)] : [], polygons: [] };
    case 'MultiLineString':
      return { points: [], lines: geometry.coordinates.filter((line) => line.length > 0).map(coordinates), polygons: [] };
    case 'Polygon':
      return { points: [], lines: [], polygons: geometry.coordinates.length > 0 ? [geometry.coordinates.map(coordinates)] : [] };
    case 'MultiPolygon':
      return {
        points: [],
        lines: [],
        polygons: geometry.coordinates.filter((polygon) => polygon.length > 0).map((polygon) => polygon.map(coordinates)),
      };
  }
}

/** The edges of the lines and polygon rings, as JTS segment strings. */
function segmentStrings(parts: Parts): ArrayList<BasicSegmentString> {
  const strings = new ArrayList<BasicSegmentString>();
  for (const line of parts.lines) strings.add(new BasicSegmentString(line, null));
  for (const polygon of parts.polygons) {
    for (const ring of polygon) strings.add(new BasicSegmentString(ring, null));
  }
  return strings;
}

/** One vertex of every line and polygon: with no edge meeting, each component lies wholly inside or outside. */
function representatives(parts: Parts): Coordinate[] {
  return [...parts.lines.map((line) => line[0]), ...parts.polygons.map((polygon) => polygon[0][0])];
}

function samePoint(a: Coordinate, b: Coordinate): boolean {
  return a.x === b.x && a.y === b.y;
}

/** Whether a point lies in a polygon (interior or boundary), a hole's interior being outside. */
function inPolygon(point: Coordinate, polygon: Coordinate[][]): boolean {
  const shell = RayCrossingCounter.locatePointInRing(point, polygon[0]);
  if (shell !== 0) return shell !== EXTERIOR;
  for (let index = 1; index < polygon.length; index++) {
    if (RayCrossingCounter.locatePointInRing(point, polygon[index]) === 0) return false;
  }
  return true;
}

/** Whether a point lies on a (not prepared) geometry: in one of its polygons or on one of its lines. */
function onParts(point: Coordinate, parts: Parts): boolean {
  for (const polygon of parts.polygons) if (inPolygon(point, polygon)) return true;
  for (const line of parts.lines) if (PointLocation.isOnLine(point, line)) return true;
  return false;
}

/**
 * A reference geometry prepared for `intersects`, which is true when the two share at least one point
 * (boundaries included), computed with JTS's robust orientation tests. JSTS's own PreparedGeometry cannot
 * be constructed in JSTS 2.12 (jsts issue 479), so this assembles the same parts JTS prepares:
 * an indexed point-in-area locator and an indexed segment-intersection finder.
 */
export class PreparedGeometry {
  private readonly parts: Parts;
  private readonly areaLocator: IndexedPointInAreaLocator | undefined;
  private readonly segmentFinder: FastSegmentSetIntersectionFinder | undefined;
  private readonly representatives: Coordinate[];

  constructor(geometry: Geometry) {
    this.parts = partsOf(geometry);
    const { polygons } = this.parts;
    this.areaLocator = polygons.length === 0
      ? undefined
      : new IndexedPointInAreaLocator(reader.read({
        type: 'MultiPolygon',
        coordinates: polygons.map((polygon) => polygon.map((ring) => ring.map((point) => [point.x, point.y]))),
      }));
    const strings = segmentStrings(this.parts);
    this.segmentFinder = strings.size() === 0 ? undefined : new FastSegmentSetIntersectionFinder(strings);
    this.representatives = representatives(this.parts);
  }

  /** Whether a point lies in the reference: in its area, on one of its lines, or on one of its points. */
  private locates(point: Coordinate): boolean {
    if (this.areaLocator !== undefined && this.areaLocator.locate(point) !== EXTERIOR) return true;
    for (const line of this.parts.lines) if (PointLocation.isOnLine(point, line)) return true;
    for (const own of this.parts.points) if (samePoint(own, point)) return true;
    return false;
  }

  /** The caller has already checked that the bounding boxes meet. */
  intersects(geometry: Geometry): boolean {
    const parts = partsOf(geometry);
    for (const point of parts.points) if (this.locates(point)) return true;
    if (parts.lines.length === 0 && parts.polygons.length === 0) return false;
    if (this.segmentFinder !== undefined && this.segmentFinder.intersects(segmentStrings(parts))) return true;
    for (const point of representatives(parts)) if (this.locates(point)) return true;
    // No edges meet and no part of the geometry lies in the reference: the reference may still lie in the geometry.
    for (const point of this.parts.points) if (onParts(point, parts)) return true;
    if (parts.polygons.length === 0) return false;
    for (const point of this.representatives) {
      for (const polygon of parts.polygons) if (inPolygon(point, polygon)) return true;
    }
    return false;
  }
}
