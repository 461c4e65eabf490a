// Buffers geometries by metres like PostGIS ST_Buffer(geography): planar buffer in a local projection, then back to lon/lat.
import geographiclib from 'geographiclib-geodesic';
import { geometryBBox } from './bbox.js';
import type { Geometry, Position } from './geometry.js';
import { dimensionOf, fromJsts, toJsts } from './jsts-geometry.js';

const WGS84 = geographiclib.Geodesic.WGS84;
const DEGREE = Math.PI / 180;
// PostGIS's default: 8 segments per quarter circle.
const QUADRANT_SEGMENTS = 8;

type PositionMap = (position: Position) => Position;

function mapGeometry(geometry: Geometry, map: PositionMap): Geometry {
  switch (geometry.type) {
    case 'Point':
      return { type: 'Point', coordinates: map(geometry.coordinates) };
    case 'MultiPoint':
      return { type: 'MultiPoint', coordinates: geometry.coordinates.map(map) };
    case 'LineString':
      return { type: 'LineString', coordinates: geometry.coordinates.map(map) };
    case 'MultiLineString':
      return { type: 'MultiLineString', coordinates: geometry.coordinates.map((line) => line.map(map)) };
    case 'Polygon':
      return { type: 'Polygon', coordinates: geometry.coordinates.map((ring) => ring.map(map)) };
    case 'MultiPolygon':
      return { type: 'MultiPolygon', coordinates: geometry.coordinates.map((polygon) => polygon.map((ring) => ring.map(map))) };
  }
}

/**
 * The geometry grown by `radius` metres, or shrunk when it is negative, like PostGIS
 * `ST_Buffer(geography, radius)`: buffered in an azimuthal equidistant projection (WGS 84 geodesics)
 * around the centre of its bounding box, where distances from that centre are true, then projected back.
 * Undefined when nothing remains: a negative radius empties points and lines, and polygons thinner than it.
 */
export function geodesicBuffer(geometry: Geometry, radius: number): Geometry | undefined {
  const bounds = geometryBBox(geometry);
  if (bounds === null) return undefined;
  if (radius < 0 && dimensionOf(geometry) < 2) return undefined;
  const centreLongitude = (bounds[0] + bounds[2]) / 2;
  const centreLatitude = (bounds[1] + bounds[3]) / 2;
  const toPlane: PositionMap = (position) => {
    const { s12, azi1 } = WGS84.Inverse(centreLatitude, centreLongitude, position[1], position[0], geographiclib.Geodesic.DISTANCE | geographiclib.Geodesic.AZIMUTH);
    const distance = s12 ?? 0;
    const azimuth = (azi1 ?? 0) * DEGREE;
    return [distance * Math.sin(azimuth), distance * Math.cos(azimuth)];
  };
  const toLonLat: PositionMap = ([x, y]) => {
    const { lat2, lon2 } = WGS84.Direct(centreLatitude, centreLongitude, Math.atan2(x, y) / DEGREE, Math.hypot(x, y));
    return [lon2 ?? centreLongitude, lat2 ?? centreLatitude];
  };
  const buffered = fromJsts(toJsts(mapGeometry(geometry, toPlane)).buffer(radius, QUADRANT_SEGMENTS), 2);
  return buffered === undefined ? undefined : mapGeometry(buffered, toLonLat);
}
