// Builders and accessors for the GeoJSON that feature tests send and read.
import assert from 'node:assert/strict';
import type { FeatureJson, Namespace } from './http-client.js';

export const NS = '@ns:com:here:xyz';

export function point(id: string | number | undefined, properties: Record<string, unknown> = {}, coordinates: unknown = [8.5, 50.1]): Record<string, unknown> {
  return { type: 'Feature', ...(id === undefined ? {} : { id }), geometry: { type: 'Point', coordinates }, properties };
}

export const collection = (...features: unknown[]) => ({ type: 'FeatureCollection', features });

export function namespaceOf(feature: FeatureJson): Namespace {
  const namespace = feature.properties?.[NS];
  assert.ok(namespace, 'the feature carries a namespace');
  return namespace;
}
