// Writes through a virtual or composite space: which layer each feature goes to, and one storage transaction for them all.
import { type HubError, hubError } from '../../core/errors.js';
import type { FeatureRow } from '../../core/feature-query.js';
import type { FeatureWrite, Storage, StoredSpace, WritePlan, WriteStep } from '../../storage/storage.js';
import type { SpaceRef, WriteActions } from '../access/authorization.js';
import type { FeatureParts } from '../feature-text.js';
import { planWrite, type WriteEntry, type WriteOptions, type WriteResult } from '../writes/write-plan.js';
import type { Layering } from './space-layout.js';
import { isTombstone, tombstone } from './tombstones.js';
import { type ActivityLog, withActivityLog } from '../activity-log/activity-log.js';

/** A space's schema check for the features it stores, as FeatureService builds it. */
export type FeatureCheck = (parts: FeatureParts, entry: WriteEntry) => HubError | undefined;

/** A layered space as a request writes through it (hub/resolve/space-scope.ts): the only way to read its layers and to be granted the write. */
export interface LayeredTarget {
  readonly space: StoredSpace;
  readonly layering: Layering;
  readonly layers: readonly StoredSpace[];
  /** The stored versions of ids in each layer, once the caller may read every layer. */
  versions(ids: string[]): Promise<Array<Map<string, FeatureRow>>>;
  /** The plan's actions on the space and on each layer it changes; 403 when not granted. */
  decideWrite(actions: WriteActions, changed: readonly SpaceRef[]): void;
  logOf(space: StoredSpace): Promise<ActivityLog | undefined>;
}

/**
 * Plans and writes entries through a layered space, in one transaction of the storage (docs/decisions.md,
 * "Virtual and composite spaces"):
 * - composite: every write goes to the space's own layer; the planner sees, for each id, the own layer's
 *   feature (read in the transaction) or else the one the layers below show; deleting a feature the layers
 *   below hold stores a tombstone.
 * - virtual: a feature goes to the last upstream holding it, a new one to the last upstream; a delete removes
 *   it from every upstream holding it. Upstreams in different databases cannot be written in one write.
 * `checkOf` gives the schema check of the layer a feature goes to.
 */
export async function writeLayered(storage: Storage, target: LayeredTarget, entries: WriteEntry[], options: WriteOptions,
  checkOf: (layer: StoredSpace, entries: WriteEntry[]) => FeatureCheck | undefined): Promise<WriteResult> {
  const { space, layers } = target;
  const ids = [...new Set(entries.map((entry) => entry.id))];
  const before = await target.versions(ids);
  const top = layers.length - 1;
  const holders = (id: string) => layers.map((_, index) => index).filter((index) => before[index].has(id));
  const composite = target.layering.kind === 'composite';
  /** Where a feature is written: the composite's own layer, or the upstream whose version the virtual space shows. */
  const targetOf = (id: string): number => (composite ? top : holders(id).at(-1) ?? top);
  /** What the layers below the composite's own show for an id. */
  const below = (id: string): string | undefined => {
    for (let index = top - 1; index >= 0; index--) {
      const json = before[index].get(id)?.json;
      if (json !== undefined) return isTombstone(json) ? undefined : json;
    }
    return undefined;
  };

  const checks = new Map<number, FeatureCheck | undefined>();
  for (const index of new Set(entries.map((entry) => targetOf(entry.id)))) {
    checks.set(index, checkOf(layers[index], entries.filter((entry) => targetOf(entry.id) === index)));
  }
  const primary = targetOf(ids[0] ?? '');
  // The activity logs of the layers the write may change (a layer with a broken log refuses it, as a plain space does).
  const logs = new Map<number, ActivityLog | undefined>();
  for (const index of new Set(ids.flatMap((id) => [targetOf(id), ...holders(id)]))) logs.set(index, await target.logOf(layers[index]));

  return storage.features.write(layers[primary].key, ids, (fresh) => {
    const existing = new Map<string, string>();
    for (const id of ids) {
      const target = targetOf(id);
      const own = target === primary ? fresh.get(id) : before[target].get(id)?.json;
      if (own !== undefined && !isTombstone(own)) existing.set(id, own);
      else if (composite && own === undefined) {
        const shown = below(id);
        if (shown !== undefined) existing.set(id, shown);
      }
    }
    let refusal: HubError | undefined;
    const check = (parts: FeatureParts, entry: WriteEntry) => { refusal ??= checks.get(targetOf(entry.id))?.(parts, entry); };
    const planned = planWrite({ id: layers[top].id, enableUUID: space.definition.enableUUID === true, check, spaceOf: (id) => layers[targetOf(id)].id },
      entries, options, existing);
    const changed = new Set([...planned.plan.upserts.map((feature) => targetOf(feature.id)), ...planned.plan.deletes.flatMap((id) => (composite ? [top] : holders(id)))]);
    target.decideWrite(planned.actions, [...changed].map((index) => layers[index]));
    for (const index of changed) {
      const layer = layers[index];
      if (layer.id !== space.id && layer.definition.readOnly === true) throw hubError('readOnlySpace', { id: layer.id });
    }
    if (planned.refusal) throw planned.refusal;
    if (refusal) throw refusal;
    const plans = layers.map((): WritePlan => ({ upserts: [], deletes: [], timestamp: planned.plan.timestamp }));
    for (const feature of planned.plan.upserts) plans[targetOf(feature.id)].upserts.push(feature);
    for (const id of planned.plan.deletes) {
      if (!composite) for (const index of holders(id)) plans[index].deletes.push(id);
      else if (below(id) !== undefined) plans[top].upserts.push(tombstone(id, space.id, planned.plan.timestamp));
      else plans[top].deletes.push(id);
    }
    // Each changed layer is one step, followed by its activity log; a composite logs what the write means (a delete, not a tombstone).
    let next: WriteStep | undefined;
    for (const index of [...changed].filter((index) => index !== primary).reverse()) {
      const plan = plans[index];
      const stepIds = [...plan.upserts.map((feature: FeatureWrite) => feature.id), ...plan.deletes];
      const then = next;
      next = { space: layers[index].key, ids: stepIds, planner: (stored) => withActivityLog(logs.get(index), { plan, next: then }, stored) };
    }
    const logged = composite ? planned.plan : plans[primary];
    return withActivityLog(logs.get(primary), { plan: plans[primary], result: planned.result, next }, composite ? existing : fresh, logged);
  });
}
