// Whether a geodesic buffer of a geometry reaches across the antimeridian, which API.md 6.6 refuses for non-point searches.
import { geometryBBox } from './bbox.js';
import type { Geometry } from './geometry.js';

/** Metres per degree of longitude on the equator and per degree of latitude at its shortest (WGS 84), rounded down. */
const METRES_PER_DEGREE_LONGITUDE = 111_319;
const METRES_PER_DEGREE_LATITUDE = 110_574;

/**
 * Errs on the side of "crosses": the longitude spread uses the highest latitude the buffer reaches,
 * and a buffer that reaches a pole touches every meridian.
 */
export function bufferCrossesAntimeridian(geometry: Geometry, radius: number): boolean {
  const box = geometryBBox(geometry);
  if (!box || radius <= 0) return false;
  const [west, south, east, north] = box;
  const highest = Math.max(Math.abs(south), Math.abs(north)) + radius / METRES_PER_DEGREE_LATITUDE;
  if (highest >= 90) return true;
  const spread = radius / (METRES_PER_DEGREE_LONGITUDE * Math.cos((highest * Math.PI) / 180));
  return west - spread < -180 || east + spread > 180;
}
