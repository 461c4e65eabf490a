// Builds a long history fast for the history section: one storage transaction per version, as the hub writes one request, without HTTP.
import { featureTexts } from '../src/hub/feature-text.js';
import type { FeatureWrite, SpaceKey, Storage } from '../src/storage/storage.js';
import { spatialPointParts } from './data.js';
import { timed, type Rate } from './measure.js';

export const BENCH_AUTHOR = 'bench';

/**
 * Writes `versions` versions into a space keeping history, `perVersion` features each, taking the features round-robin from a
 * pool of `pool` ids: the first pass inserts them, later ones update them (and so move their old states into the history).
 * Each text carries its version and author, as the hub's own writes do.
 */
export async function fillHistory(storage: Storage, space: SpaceKey, spaceId: string, versions: number, perVersion: number, pool: number): Promise<Rate> {
  return timed(async () => {
    for (let write = 0; write < versions; write++) {
      const indexes = Array.from({ length: perVersion }, (_, k) => (write * perVersion + k) % pool);
      const ids = indexes.map((index) => `sp-${index}`);
      await storage.features.write(space, ids, (_existing, taken) => {
        const version = taken.get(space.sid);
        const timestamp = Date.now();
        const upserts: FeatureWrite[] = indexes.map((index) => {
          const parts = spatialPointParts(index, spaceId, timestamp);
          return featureTexts({ ...parts, properties: { ...parts.properties, write }, namespace: { ...parts.namespace, version, author: BENCH_AUTHOR } }).stored;
        });
        return { plan: { upserts, deletes: [], timestamp }, result: undefined };
      }, { versioned: [space], author: BENCH_AUTHOR });
    }
    return versions;
  });
}
