// The quota step of the write pipeline: `maxFeaturesPerSpace` of the caller's token, on each layer the write stores features in.
import { hubError } from '../../core/errors.js';
import type { Storage } from '../../storage/storage.js';
import type { Claims } from '../access/claims.js';
import type { LayerTargets, LayerWrite } from './layer-targets.js';

/**
 * Counts each layer the write may change as the write starts, and refuses, inside the transaction, a write whose net
 * inserts into a layer would pass the quota (deletes in the same request count against inserts). Writes running at
 * the same moment may together pass it by their own size: making them exact would serialize every write to a space
 * behind a counter lock (docs/decisions.md, "Rights and quotas").
 */
export class QuotaPolicy {
  private constructor(private readonly quota: number, private readonly counts: ReadonlyMap<number, number>) {}

  static async of(storage: Storage, caller: Claims, targets: LayerTargets): Promise<QuotaPolicy> {
    const quota = caller.limits?.maxFeaturesPerSpace;
    const counts = new Map<number, number>();
    if (quota === undefined || quota <= 0) return new QuotaPolicy(0, counts);
    for (const index of targets.reachable()) counts.set(index, await storage.features.count(targets.layers[index].key, {}));
    return new QuotaPolicy(quota, counts);
  }

  check(writes: readonly LayerWrite[]): void {
    if (this.quota <= 0) return;
    for (const write of writes) {
      const before = this.counts.get(write.index) ?? 0;
      const after = before + write.growth;
      if (after > before && after > this.quota) throw hubError('featureQuotaReached', { limit: this.quota, space: write.layer.id, count: after });
    }
  }
}
