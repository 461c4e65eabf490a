// Vector tiles (MVT): tile geometry shared by both engines, feature attributes, and the geojson-vt/vt-pbf encoding.
import GeoJSONVT from 'geojson-vt';
import vtpbf from 'vt-pbf';
import type { Feature, FeatureCollection, Geometry as GeoJsonGeometry } from 'geojson';
import type { VectorTileRequest } from './vector-tile-request.js';
import type { BBox } from './bbox.js';
import { MERCATOR_MAX_LATITUDE } from './tile-schemes.js';

/** The EPSG:3857 sphere radius: x = R·λ, y = R·ln(tan(π/4 + φ/2)). */
const RADIUS = 6378137;
const MAX_X = Math.PI * RADIUS;

const toRadians = (degrees: number): number => (degrees * Math.PI) / 180;
const toDegrees = (radians: number): number => (radians * 180) / Math.PI;
const clamp = (value: number, low: number, high: number): number => Math.min(high, Math.max(low, value));

export function mercatorX(longitude: number): number {
  return RADIUS * toRadians(longitude);
}

export function mercatorY(latitude: number): number {
  return RADIUS * Math.log(Math.tan(Math.PI / 4 + toRadians(clamp(latitude, -MERCATOR_MAX_LATITUDE, MERCATOR_MAX_LATITUDE)) / 2));
}

function latitudeOfMercatorY(y: number): number {
  return toDegrees(2 * Math.atan(Math.exp(y / RADIUS)) - Math.PI / 2);
}

interface TileFrame {
  /** The tile in the coordinates of its projection (EPSG:3857 metres or degrees), W,S,E,N: what maps onto 0..extent. */
  tile: BBox;
  /** The tile with its buffer, in degrees (within ±85.05° for Mercator): geometries are clipped to it before projecting. */
  clip: BBox;
}

/** Where a tile lies in its projection, and the buffered box its geometries are cut to. */
export function tileFrame(request: VectorTileRequest): TileFrame {
  const [west, south, east, north] = request.bounds;
  const share = request.buffer / request.extent;
  if (request.projection === 'geographic') {
    const pad = (east - west) * share;
    return {
      tile: request.bounds,
      clip: [clamp(west - pad, -180, 180), clamp(south - pad, -90, 90), clamp(east + pad, -180, 180), clamp(north + pad, -90, 90)],
    };
  }
  const tile: BBox = [mercatorX(west), mercatorY(south), mercatorX(east), mercatorY(north)];
  const pad = (tile[2] - tile[0]) * share;
  return {
    tile,
    clip: [
      clamp(west - toDegrees(pad / RADIUS), -180, 180),
      latitudeOfMercatorY(clamp(tile[1] - pad, -MAX_X, MAX_X)),
      clamp(east + toDegrees(pad / RADIUS), -180, 180),
      latitudeOfMercatorY(clamp(tile[3] + pad, -MAX_X, MAX_X)),
    ],
  };
}

type TileAttributes = Record<string, string | number | boolean | null>;

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The whole numbers an MVT integer value holds: vt-pbf writes whole numbers as uint64 or, when negative, sint64. */
const fitsMvtInteger = (value: number): boolean => value >= -(2 ** 63) && value < 2 ** 64;

/**
 * An attribute's value: objects and arrays as their JSON text, scalars as they are, except a whole number no 64-bit
 * integer holds (1e20), which vt-pbf cannot write (it always writes whole numbers as integers) and is given as its JSON
 * text; PostGIS's ST_AsMVT writes such a number as a double.
 */
function scalarOrText(value: unknown): string | number | boolean | null {
  if (typeof value === 'number') return Number.isInteger(value) && !fitsMvtInteger(value) ? JSON.stringify(value) : value;
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : (value as string | boolean | null);
}

function flattenInto(target: TileAttributes, prefix: string, value: Record<string, unknown>): void {
  for (const [key, member] of Object.entries(value)) {
    if (isPlainObject(member)) flattenInto(target, `${prefix}${key}.`, member);
    else target[`${prefix}${key}`] = scalarOrText(member);
  }
}

/**
 * The MVT attributes of a feature (API.md 6.2). Plain: every top-level property, objects and arrays as their
 * JSON text, plus `id`. Flattened: `properties.<dotted.path>` for every leaf of nested objects (arrays stay
 * JSON text), plus `properties.id`. The feature id wins over a property of the same name. Null values are
 * left out by the encoders (MVT has no null).
 */
function tileAttributes(id: string, properties: unknown, flatten: boolean): TileAttributes {
  const attributes: TileAttributes = {};
  const members = isPlainObject(properties) ? properties : {};
  if (flatten) {
    flattenInto(attributes, 'properties.', members);
    attributes['properties.id'] = id;
  } else {
    for (const [key, member] of Object.entries(members)) attributes[key] = scalarOrText(member);
    attributes.id = id;
  }
  return attributes;
}

/** geojson-vt tiles the Web-Mercator world only up to this level: vector tiles of both engines stop there. */
export const MAX_VECTOR_TILE_LEVEL = 24;

/** The inverse of the Web-Mercator row position v ∈ [0, 1] (0 at the north). */
const latitudeOfRow = (v: number): number => toDegrees(Math.atan(Math.sinh(Math.PI * (1 - 2 * v))));

/**
 * The features (geometry in lon/lat) as one MVT layer, clipped to the tile and its buffer, without simplification.
 * geojson-vt knows only Web-Mercator tiles: a geographic tile is handed over as the Mercator tile that holds
 * the same place of the grid, each latitude moved to the Mercator latitude of its row (lon/lat squares of
 * 360/2^L degrees map to Mercator tiles of level L). Returns an empty buffer for a tile without features.
 */
function encodeVectorTile(features: Array<{ geometry: GeoJsonGeometry; attributes: TileAttributes }>, request: VectorTileRequest): Buffer {
  const [west, , east, north] = request.bounds;
  const level = Math.round(Math.log2(360 / (east - west)));
  if (level > MAX_VECTOR_TILE_LEVEL) throw new RangeError(`vector tiles of level ${level} exceed level ${MAX_VECTOR_TILE_LEVEL}`);
  const size = 2 ** level;
  const x = Math.round(((west + 180) / 360) * size);
  const geographic = request.projection === 'geographic';
  const row = geographic ? (90 - north) / 360 : 0.5 - mercatorY(north) / (2 * MAX_X);
  const y = Math.round(row * size);
  const collection: FeatureCollection = {
    type: 'FeatureCollection',
    features: features.map(({ geometry, attributes }): Feature => ({
      type: 'Feature',
      geometry: geographic ? mapLatitudes(geometry, (latitude) => latitudeOfRow((90 - latitude) / 360)) : geometry,
      properties: attributes,
    })),
  };
  const index = new GeoJSONVT(collection, {
    maxZoom: level, indexMaxZoom: 0, tolerance: 0, extent: request.extent, buffer: request.buffer,
  });
  const tile = index.getTile(level, x, y);
  if (!tile || tile.features.length === 0) return Buffer.alloc(0);
  const bytes = vtpbf.fromGeojsonVt({ [request.layer]: tile }, { version: 2, extent: request.extent });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function mapLatitudes(geometry: GeoJsonGeometry, map: (latitude: number) => number): GeoJsonGeometry {
  const position = (p: number[]): number[] => [p[0], map(p[1])];
  switch (geometry.type) {
    case 'Point':
      return { type: 'Point', coordinates: position(geometry.coordinates) };
    case 'MultiPoint':
    case 'LineString':
      return { type: geometry.type, coordinates: geometry.coordinates.map(position) } as GeoJsonGeometry;
    case 'MultiLineString':
    case 'Polygon':
      return { type: geometry.type, coordinates: geometry.coordinates.map((line) => line.map(position)) } as GeoJsonGeometry;
    case 'MultiPolygon':
      return { type: 'MultiPolygon', coordinates: geometry.coordinates.map((polygon) => polygon.map((line) => line.map(position))) };
    case 'GeometryCollection':
      return { type: 'GeometryCollection', geometries: geometry.geometries.map((member) => mapLatitudes(member, map)) };
  }
}

/** A stored feature as far as a tile needs it. */
interface StoredFeature {
  id: string;
  geometry: GeoJsonGeometry | null;
  properties?: unknown;
}

/** The tile of the features an engine reads page by page as stored JSON texts; features without geometry are left out. */
export async function vectorTileOf(pages: AsyncIterable<ReadonlyArray<{ json: string }>>, request: VectorTileRequest): Promise<Buffer> {
  const features: Array<{ geometry: GeoJsonGeometry; attributes: TileAttributes }> = [];
  for await (const page of pages) {
    for (const row of page) {
      const feature = JSON.parse(row.json) as StoredFeature;
      if (feature.geometry) features.push({ geometry: feature.geometry, attributes: tileAttributes(feature.id, feature.properties, request.flatten) });
    }
  }
  return encodeVectorTile(features, request);
}
