// Opens each test backend's Storage directly (no hub process) and writes features into a fresh space.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../helpers/backends.js';
import { createTestDatabase } from '../helpers/postgres-cluster.js';
import { geometryBBox } from '../../src/geo/bbox.js';
import type { Geometry } from '../../src/geo/geometry.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { SpaceKey, Storage } from '../../src/storage/storage.js';

export interface TestFeature {
  id: string;
  geometry: Geometry | null;
  properties: Record<string, unknown>;
  tags?: string[];
}

export interface OpenedStorage {
  storage: Storage;
  close(): Promise<void>;
}

export async function openTestStorage(backend: Backend): Promise<OpenedStorage> {
  if (backend === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'hub-storage-'));
    const storage = await openStorage(`sqlite:${join(dir, 'hub.db')}`);
    return { storage, async close() { await storage.close(); rmSync(dir, { recursive: true, force: true }); } };
  }
  const database = await createTestDatabase();
  const storage = await openStorage(database.url);
  return { storage, async close() { await storage.close(); await database.remove(); } };
}

/** A new space holding the features, stored as the hub stores them (compact JSON text plus index columns). */
export async function spaceWith(storage: Storage, spaceId: string, features: TestFeature[]): Promise<SpaceKey> {
  const space = await storage.spaces.create(spaceId, { title: spaceId, createdAt: 1, updatedAt: 1 }, Date.now());
  for (let start = 0; start < features.length; start += 5000) {
    const chunk = features.slice(start, start + 5000);
    const upserts = chunk.map((feature) => ({
      id: feature.id,
      json: JSON.stringify({ type: 'Feature', id: feature.id, geometry: feature.geometry, properties: feature.properties }),
      geometryType: feature.geometry?.type ?? null,
      bbox: feature.geometry ? geometryBBox(feature.geometry) : null,
      tags: feature.tags ?? [],
    }));
    await storage.features.write(space.key, chunk.map((feature) => feature.id), () => ({
      plan: { upserts, deletes: [], timestamp: Date.now() }, result: undefined,
    }));
  }
  return space.key;
}
