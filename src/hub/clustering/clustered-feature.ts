// The parts of a stored feature that clustering reads: id, geometry and properties.
import { isObject } from '../../core/json.js';
import type { Geometry, Position } from '../../geo/geometry.js';
import { positionLists } from '../../geo/geometry.js';
import { geometryBBox } from '../../geo/bbox.js';
import type { BBox } from '../../geo/bbox.js';

export interface ClusteredFeature {
  id: string;
  geometry: Geometry;
  properties: Record<string, unknown>;
}

/** A stored feature's JSON text; features without a geometry take no part in clustering. */
export function readFeature(json: string): ClusteredFeature | undefined {
  const feature: unknown = JSON.parse(json);
  if (!isObject(feature) || !isObject(feature.geometry)) return undefined;
  const properties = isObject(feature.properties) ? feature.properties : {};
  return { id: String(feature.id ?? ''), geometry: feature.geometry as unknown as Geometry, properties };
}

export function featureBBox(feature: ClusteredFeature): BBox | null {
  return geometryBBox(feature.geometry);
}

/** The feature's first position (`singlecoord`), or undefined for an empty geometry. */
export function firstPosition(feature: ClusteredFeature): Position | undefined {
  for (const positions of positionLists(feature.geometry)) {
    if (positions.length > 0) return positions[0];
  }
  return undefined;
}

/** The numeric value at a dotted path below `properties`, or undefined. */
export function numericProperty(feature: ClusteredFeature, path: readonly string[]): number | undefined {
  let value: unknown = feature.properties;
  for (const segment of path) {
    if (!isObject(value)) return undefined;
    value = value[segment];
  }
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
