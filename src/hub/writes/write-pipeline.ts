// The one write pipeline of every kind of space: layer targets, policies, plan, storage steps (docs/decisions.md, "The write pipeline").
import type { JobFence, Storage } from '../../storage/storage.js';
import type { ProcessorCache } from '../processors/space-processors.js';
import type { SpaceScope } from '../resolve/space-scope.js';
import { LayerTargets } from './layer-targets.js';
import { MergePolicy } from './merge-policy.js';
import { QuotaPolicy } from './quota-policy.js';
import { refuseReadOnlyLayers } from './read-only-policy.js';
import { decidePlan, decideWriter } from './rights-policy.js';
import { SchemaPolicy } from './schema-policy.js';
import { activityLogs, storageSteps } from './storage-steps.js';
import { applyTaggingRules } from './tagging-rules-policy.js';
import { authorOf, keepsHistory } from '../versions/space-versions.js';
import { planWrite, type WriteEntry, type WriteOptions, type WriteResult } from './write-plan.js';

/**
 * Writes validated entries through the scope's space (checked not read-only when it was opened), as a whole or
 * not at all. Before the transaction: the writer's rights, the layer targets (reading a layered space's other
 * layers), the tagging rules, the schemas, the quota counts, the activity logs and the ORIGINs to merge from. Inside it, on the
 * plan made from what is stored (and, for features read at an older version, what was stored then): the plan's rights, read-only layers, the plan's own refusal, the schema's, the quota; then the
 * storage steps. Each refusal aborts the transaction, in this order, so that what a caller learns from one never
 * depends on something it may not see. A job's write carries its fence (JobFence), the storage's last step before the
 * commit: the write commits only while the job's node holds its lease.
 */
export async function writeThrough(storage: Storage, processors: ProcessorCache, scope: SpaceScope, entries: WriteEntry[],
  options: WriteOptions, fence?: JobFence): Promise<WriteResult> {
  decideWriter(scope);
  const targets = await LayerTargets.of(scope, entries);
  applyTaggingRules(processors, targets, entries);
  const schema = new SchemaPolicy(processors, targets, entries);
  const quota = await QuotaPolicy.of(storage, scope.caller, targets);
  const logs = await activityLogs(scope, targets);
  const merge = new MergePolicy(targets, entries);
  const top = targets.layers[targets.top];
  const keepChanges = [...logs.values()].some((log) => log !== undefined);
  // Each layer the write may change and that keeps history takes its next version before the plan (ADR 002).
  const versioned = targets.reachable().map((index) => targets.layers[index]).filter((layer) => keepsHistory(layer.definition));
  const author = authorOf(scope.caller);
  return storage.features.write(targets.layers[targets.primary].key, targets.ids, (fresh, versions, origins) => {
    const { check, refuse } = schema.start();
    const originOf = merge.start(origins);
    const stampOf = (id: string) => {
      const version = versions.get(targets.layers[targets.targetOf(id)].key.sid);
      return version === undefined ? undefined : { version, author };
    };
    const context = { id: top.id, enableUUID: scope.space.definition.enableUUID === true, check, spaceOf: targets.spaceOf, keepChanges, stampOf, originOf };
    const planned = planWrite(context, entries, options, targets.existing(fresh));
    const writes = targets.split(planned, fresh);
    decidePlan(scope, planned.actions, writes);
    refuseReadOnlyLayers(scope.space, writes);
    if (planned.refusal) throw planned.refusal;
    refuse();
    quota.check(writes);
    return { ...storageSteps(targets, writes, logs, planned.plan.timestamp), result: planned.result };
  }, { versioned: versioned.map((layer) => layer.key), author, origins: merge.origins }, fence);
}
