// Bounding boxes of geometries, stored alongside features so spatial queries can filter on them.
import { positionLists, type Geometry } from './geometry.js';

export type BBox = [west: number, south: number, east: number, north: number];

/**
 * Plain min/max over all positions: a geometry crossing the antimeridian gets a box spanning
 * the whole longitude range, which over-matches in queries but never misses the feature.
 */
export function geometryBBox(geometry: Geometry): BBox | null {
  // A point without the lists positionLists allocates: most features of a bulk write are points.
  if (geometry.type === 'Point') {
    const [longitude, latitude] = geometry.coordinates;
    return longitude === undefined ? null : [longitude, latitude, longitude, latitude];
  }
  let west = Infinity;
  let south = Infinity;
  let east = -Infinity;
  let north = -Infinity;
  for (const positions of positionLists(geometry)) {
    for (const position of positions) {
      const longitude = position[0];
      const latitude = position[1];
      if (longitude < west) west = longitude;
      if (longitude > east) east = longitude;
      if (latitude < south) south = latitude;
      if (latitude > north) north = latitude;
    }
  }
  return west === Infinity ? null : [west, south, east, north];
}
