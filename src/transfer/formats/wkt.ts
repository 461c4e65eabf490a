// Well-known text to and from GeoJSON geometries, for the geometry column of CSV files.
import type { Geometry } from '../transfer-feature.js';

type Coordinates = number[] | Coordinates[];

const TYPES: Record<string, string> = {
  POINT: 'Point', LINESTRING: 'LineString', POLYGON: 'Polygon', MULTIPOINT: 'MultiPoint',
  MULTILINESTRING: 'MultiLineString', MULTIPOLYGON: 'MultiPolygon', GEOMETRYCOLLECTION: 'GeometryCollection',
};
/** How deep the coordinate arrays of each type nest (a Point's position is depth 0). */
const DEPTH: Record<string, number> = { Point: 0, LineString: 1, MultiPoint: 1, Polygon: 2, MultiLineString: 2, MultiPolygon: 3 };

/** Parses WKT; throws an Error saying what is wrong. */
export function parseWkt(text: string): Geometry {
  const tokens = text.toUpperCase().match(/[A-Z]+|[-+0-9.E]+|[(),]/g) ?? [];
  let at = 0;
  const next = (): string => {
    const token = tokens[at++];
    if (token === undefined) throw new Error('the WKT ends too early');
    return token;
  };
  const expect = (wanted: string) => {
    const token = next();
    if (token !== wanted) throw new Error(`expected "${wanted}" in the WKT, found "${token}"`);
  };
  const position = (): number[] => {
    const values: number[] = [];
    while (tokens[at] !== ',' && tokens[at] !== ')' && at < tokens.length) {
      const value = Number(next());
      if (!Number.isFinite(value)) throw new Error('a WKT coordinate is not a number');
      values.push(value);
    }
    if (values.length < 2) throw new Error('a WKT position needs at least two numbers');
    return values;
  };
  const list = (depth: number): Coordinates => {
    if (depth === 0) return position();
    expect('(');
    const items: Coordinates[] = [];
    for (;;) {
      // MULTIPOINT (1 2, 3 4) and MULTIPOINT ((1 2), (3 4)) are both in use.
      items.push(depth === 1 && tokens[at] === '(' ? (at++, ((p) => (expect(')'), p))(position())) : list(depth - 1));
      const token = next();
      if (token === ')') return items;
      if (token !== ',') throw new Error(`expected "," or ")" in the WKT, found "${token}"`);
    }
  };
  const geometry = (): Geometry => {
    const type = TYPES[next()];
    if (type === undefined) throw new Error('unknown WKT geometry type');
    if (tokens[at] === 'Z' || tokens[at] === 'M' || tokens[at] === 'ZM') at++;
    if (tokens[at] === 'EMPTY') {
      at++;
      return type === 'GeometryCollection' ? { type, geometries: [] } : { type, coordinates: [] };
    }
    if (type === 'GeometryCollection') {
      expect('(');
      const geometries: Geometry[] = [geometry()];
      while (next() === ',') geometries.push(geometry());
      return { type, geometries };
    }
    if (type === 'Point') {
      expect('(');
      const point = position();
      expect(')');
      return { type, coordinates: point };
    }
    return { type, coordinates: list(DEPTH[type]) };
  };
  const result = geometry();
  if (at !== tokens.length) throw new Error('unexpected text after the WKT geometry');
  return result;
}

const positions = (value: unknown, depth: number): string =>
  depth === 0 ? (value as number[]).join(' ') : `(${(value as unknown[]).map((item) => positions(item, depth - 1)).join(', ')})`;

export function formatWkt(geometry: Geometry): string {
  const name = Object.keys(TYPES).find((key) => TYPES[key] === geometry.type);
  if (name === undefined) throw new Error(`unknown geometry type ${geometry.type}`);
  if (geometry.type === 'GeometryCollection') return `${name} (${(geometry.geometries ?? []).map(formatWkt).join(', ')})`;
  const coordinates = geometry.coordinates as unknown[];
  if (coordinates.length === 0) return `${name} EMPTY`;
  const z = hasZ(geometry) ? ' Z' : '';
  return geometry.type === 'Point' ? `${name}${z} (${coordinates.join(' ')})` : `${name}${z} ${positions(coordinates, DEPTH[geometry.type])}`;
}

/** Whether the first position has a third number. */
export function hasZ(geometry: Geometry): boolean {
  if (geometry.type === 'GeometryCollection') return (geometry.geometries ?? []).some(hasZ);
  let value: unknown = geometry.coordinates;
  while (Array.isArray(value) && Array.isArray(value[0])) value = value[0];
  return Array.isArray(value) && value.length > 2;
}
