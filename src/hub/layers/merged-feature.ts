// The one feature a `merge` virtual space shows for the versions its upstreams hold of one id (API.md 3.7).
import { isObject } from '../../core/json.js';
import { NS } from '../namespace.js';

interface StoredFeature {
  id: string;
  geometry: unknown;
  properties: Record<string, unknown>;
  [member: string]: unknown;
}

/** Objects merge member by member, later versions winning; any other value of a later version replaces. */
function mergeValues(earlier: unknown, later: unknown): unknown {
  if (!isObject(earlier) || !isObject(later)) return later;
  const merged: Record<string, unknown> = { ...earlier };
  for (const [name, value] of Object.entries(later)) {
    Object.defineProperty(merged, name, { value: mergeValues(merged[name], value), enumerable: true, writable: true, configurable: true });
  }
  return merged;
}

interface StoredNamespace { createdAt?: number; updatedAt?: number; tags?: string[] }

/**
 * `versions` in upstream order. Properties and foreign members merge (later upstreams win), the geometry is the
 * last one that is not null, tags are the union, createdAt the earliest and updatedAt the latest. The namespace
 * has no `space` (the feature is no upstream's) and no uuid: no stored state has the merged content.
 */
export function mergeVersions(versions: readonly string[]): string {
  const features = versions.map((json) => JSON.parse(json) as StoredFeature);
  let merged: Record<string, unknown> = {};
  let geometry: unknown = null;
  const tags: string[] = [];
  let createdAt = Infinity;
  let updatedAt = -Infinity;
  for (const { type: _type, id: _id, geometry: ownGeometry, properties, ...extra } of features) {
    const { [NS]: namespace, ...user } = properties ?? {};
    const ns = (namespace ?? {}) as StoredNamespace;
    for (const tag of ns.tags ?? []) if (!tags.includes(tag)) tags.push(tag);
    createdAt = Math.min(createdAt, ns.createdAt ?? Infinity);
    updatedAt = Math.max(updatedAt, ns.updatedAt ?? -Infinity);
    if (ownGeometry !== null && ownGeometry !== undefined) geometry = ownGeometry;
    merged = mergeValues(merged, { ...extra, properties: user }) as Record<string, unknown>;
  }
  const { properties, ...extra } = merged;
  const namespace = { createdAt, updatedAt, tags };
  return JSON.stringify({ type: 'Feature', id: features[0].id, geometry, properties: { ...(properties as object), [NS]: namespace }, ...extra });
}
