// The storage steps of a write, all in its one transaction: each changed layer's features, then that layer's activity log.
import type { WritePlan, WriteStep } from '../../storage/storage.js';
import { type ActivityLog, activityLogStep } from '../activity-log/activity-log.js';
import type { SpaceScope } from '../resolve/space-scope.js';
import type { LayerTargets, LayerWrite } from './layer-targets.js';

/** The activity log of each layer the write may change, looked up before the transaction: a layer whose log is missing refuses the write. */
export async function activityLogs(scope: SpaceScope, targets: LayerTargets): Promise<Map<number, ActivityLog | undefined>> {
  const logs = new Map<number, ActivityLog | undefined>();
  for (const index of targets.reachable()) logs.set(index, await scope.logOf(targets.layers[index]));
  return logs;
}

/**
 * What a changed layer stores after its features, in the same transaction: its activity log, from the changes the
 * plan parsed once. A layer's further records of a write (its history) chain here too.
 */
function afterFeatures(write: LayerWrite, log: ActivityLog | undefined, then: WriteStep | undefined): WriteStep | undefined {
  return activityLogStep(log, write.changes, write.plan.timestamp, then);
}

/**
 * The transaction's steps: the primary layer's features (the transaction's first write, read inside it) and what
 * follows them, then every other changed layer's features and what follows them, in the order of the plan.
 */
export function storageSteps(targets: LayerTargets, writes: readonly LayerWrite[], logs: ReadonlyMap<number, ActivityLog | undefined>,
  timestamp: number): { plan: WritePlan; next?: WriteStep } {
  let next: WriteStep | undefined;
  for (const write of writes.filter((write) => write.index !== targets.primary).reverse()) {
    const then = afterFeatures(write, logs.get(write.index), next);
    const ids = [...write.plan.upserts.map((feature) => feature.id), ...write.plan.deletes];
    next = { space: write.layer.key, ids, planner: () => ({ plan: write.plan, next: then }) };
  }
  const primary = writes.find((write) => write.index === targets.primary);
  return primary
    ? { plan: primary.plan, next: afterFeatures(primary, logs.get(primary.index), next) }
    : { plan: { upserts: [], deletes: [], timestamp }, next };
}
