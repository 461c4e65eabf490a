// Deletion markers of a composite space: a feature deleted through it is hidden in its base, which stays unchanged.
import type { FeatureWrite } from '../../storage/storage.js';
import { NS } from '../namespace.js';

/**
 * A tombstone is stored in the composite's own layer as a feature without geometry, tags or properties whose
 * namespace says `"deleted": true`: clients cannot write that member (the hub drops unknown namespace members),
 * so only the hub makes one. It hides the base's feature of the same id and is itself never read.
 */
export function tombstone(id: string, spaceId: string, now: number): FeatureWrite {
  const json = `{"type":"Feature","id":${JSON.stringify(id)},"geometry":null,"properties":${JSON.stringify({ [NS]: { space: spaceId, createdAt: now, updatedAt: now, tags: [], deleted: true } })}}`;
  return { id, json, geometryType: null, bbox: null, tags: [] };
}

/** Only texts holding the marker are parsed to make sure: a user property may hold the same characters. */
export function isTombstone(json: string): boolean {
  if (!json.includes('"deleted":true')) return false;
  const feature = JSON.parse(json) as { properties?: Record<string, { deleted?: unknown } | undefined> };
  return feature.properties?.[NS]?.deleted === true;
}
