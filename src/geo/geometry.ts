// GeoJSON geometry types (RFC 7946) for the six geometry kinds the hub stores.

export const GEOMETRY_TYPES = ['Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon'] as const;

export type GeometryType = (typeof GEOMETRY_TYPES)[number];

export type Position = [longitude: number, latitude: number] | [longitude: number, latitude: number, altitude: number];

// Foreign members such as `bbox` are allowed by the contract and kept as they are.
interface GeometryOf<T extends GeometryType, C> {
  type: T;
  coordinates: C;
  bbox?: number[];
}

export type Point = GeometryOf<'Point', Position>;
export type MultiPoint = GeometryOf<'MultiPoint', Position[]>;
export type LineString = GeometryOf<'LineString', Position[]>;
export type MultiLineString = GeometryOf<'MultiLineString', Position[][]>;
export type Polygon = GeometryOf<'Polygon', Position[][]>;
export type MultiPolygon = GeometryOf<'MultiPolygon', Position[][][]>;

export type Geometry = Point | MultiPoint | LineString | MultiLineString | Polygon | MultiPolygon;

const GEOMETRY_TYPE_SET: ReadonlySet<string> = new Set(GEOMETRY_TYPES);

export function isGeometryType(type: string): type is GeometryType {
  return GEOMETRY_TYPE_SET.has(type);
}

/** The geometry's positions grouped into flat lists, so callers can walk any geometry with two loops. */
export function positionLists(geometry: Geometry): Position[][] {
  switch (geometry.type) {
    case 'Point':
      return [[geometry.coordinates]];
    case 'MultiPoint':
    case 'LineString':
      return [geometry.coordinates];
    case 'MultiLineString':
    case 'Polygon':
      return geometry.coordinates;
    case 'MultiPolygon':
      return geometry.coordinates.flat();
  }
}
