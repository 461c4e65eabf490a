// Conversion between hub GeoJSON geometries and JSTS geometries, for the overlay and buffer operations JSTS provides.
import 'jsts/org/locationtech/jts/monkey.js';
import type JstsGeometry from 'jsts/org/locationtech/jts/geom/Geometry.js';
import GeometryFactory from 'jsts/org/locationtech/jts/geom/GeometryFactory.js';
import GeoJSONReader from 'jsts/org/locationtech/jts/io/GeoJSONReader.js';
import GeoJSONWriter from 'jsts/org/locationtech/jts/io/GeoJSONWriter.js';
import { force2D } from './coordinates.js';
import type { Geometry, Position } from './geometry.js';

const reader = new GeoJSONReader(new GeometryFactory());
const writer = new GeoJSONWriter();

export function toJsts(geometry: Geometry): JstsGeometry {
  return reader.read(force2D(geometry));
}

/** 0 for points, 1 for lines, 2 for polygons. */
export function dimensionOf(geometry: Geometry): number {
  switch (geometry.type) {
    case 'Point':
    case 'MultiPoint':
      return 0;
    case 'LineString':
    case 'MultiLineString':
      return 1;
    case 'Polygon':
    case 'MultiPolygon':
      return 2;
  }
}

function components(geometry: JstsGeometry, into: JstsGeometry[]): JstsGeometry[] {
  if (geometry.getGeometryType() === 'GeometryCollection' || geometry.getGeometryType().startsWith('Multi')) {
    for (let index = 0; index < geometry.getNumGeometries(); index++) components(geometry.getGeometryN(index), into);
  } else if (!geometry.isEmpty()) {
    into.push(geometry);
  }
  return into;
}

/**
 * The parts of a JSTS result of the given dimension as one GeoJSON geometry (single or Multi), or
 * undefined when there are none: lower-dimensional leftovers of an overlay, such as the edge a polygon
 * shares with the clip box, are dropped.
 */
export function fromJsts(geometry: JstsGeometry, dimension: number): Geometry | undefined {
  const parts = components(geometry, []).filter((part) => part.getDimension() === dimension);
  if (parts.length === 0) return undefined;
  const coordinates = parts.map((part) => writer.write(part).coordinates);
  switch (dimension) {
    case 0:
      return coordinates.length === 1
        ? { type: 'Point', coordinates: coordinates[0] as Position }
        : { type: 'MultiPoint', coordinates: coordinates as Position[] };
    case 1:
      return coordinates.length === 1
        ? { type: 'LineString', coordinates: coordinates[0] as Position[] }
        : { type: 'MultiLineString', coordinates: coordinates as Position[][] };
    default:
      return coordinates.length === 1
        ? { type: 'Polygon', coordinates: coordinates[0] as Position[][] }
        : { type: 'MultiPolygon', coordinates: coordinates as Position[][][] };
  }
}
