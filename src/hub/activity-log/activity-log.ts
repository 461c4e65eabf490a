// Appends the activity log of a write: one log feature per changed feature, as further steps of the write's transaction.
import { randomUUID } from 'node:crypto';
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { FeatureWrite, Storage, StoredSpace, WritePlan, WriteStep } from '../../storage/storage.js';
import { type FeatureParts, featureTexts, parseStoredFeature } from '../feature-text.js';
import { type ActivityLogConfig, logListenerOf } from './log-listener.js';
import { logSourceOf } from './log-spaces.js';
import { stateDiff } from './state-diff.js';

/** The namespace of a log feature's own members (docs/decisions.md, "Activity log"). */
export const LOG_NS = '@ns:com:here:xyz:log';

export type Operation = 'insert' | 'update' | 'delete';

/** One changed feature of a write: its state before (absent on insert) and after (absent on delete). */
interface Change {
  id: string;
  operation: Operation;
  before?: FeatureParts;
  after?: FeatureParts;
}

/** Where a logged space's writes are logged, and how. */
export interface ActivityLog {
  config: ActivityLogConfig;
  log: StoredSpace;
}

/** The activity log of a space, undefined when it has none; a log space gone astray refuses the write (nothing unlogged is written). */
export async function activityLogOf(storage: Storage, space: StoredSpace): Promise<ActivityLog | undefined> {
  const config = logListenerOf(space.definition);
  if (!config) return undefined;
  const log = await storage.spaces.get(config.spaceId);
  if (!log || logSourceOf(log.definition) !== space.id) throw hubError('activityLogMissing', { id: config.spaceId, source: space.id });
  return { config, log };
}

function changesOf(plan: WritePlan, existing: ReadonlyMap<string, string>): Change[] {
  const changes: Change[] = [];
  for (const write of plan.upserts) {
    const stored = existing.get(write.id);
    const after = parseStoredFeature(write.json);
    changes.push(stored === undefined ? { id: write.id, operation: 'insert', after } : { id: write.id, operation: 'update', before: parseStoredFeature(stored), after });
  }
  for (const id of plan.deletes) {
    const stored = existing.get(id);
    if (stored !== undefined) changes.push({ id, operation: 'delete', before: parseStoredFeature(stored) });
  }
  return changes;
}

function logMembers(parts: FeatureParts): Record<string, unknown> {
  const log = parts.properties[LOG_NS];
  return isObject(log) ? log : {};
}

/** The log feature of one change; `states` lists the log ids kept for the feature, this one last. */
function logFeature(log: ActivityLog, change: Change, stateId: string, states: string[], time: number): FeatureWrite {
  const state = (change.after ?? change.before) as FeatureParts;
  const members: Record<string, unknown> = { id: change.id, operation: change.operation, uuid: stateId };
  if (change.before?.namespace.uuid !== undefined) members.puuid = change.before.namespace.uuid;
  members.time = time;
  if (log.config.storageMode !== 'FEATURE_ONLY' && change.after) members.diff = stateDiff(change.before, change.after);
  members.states = states;
  const content = log.config.storageMode !== 'DIFF_ONLY';
  return featureTexts({
    id: stateId,
    geometry: content ? state.geometry : null,
    properties: { ...(content ? state.properties : {}), [LOG_NS]: members },
    namespace: { space: log.log.id, createdAt: time, updatedAt: time, tags: state.namespace.tags },
    extra: content ? state.extra : {},
  }).stored;
}

/** The previous state's log feature, marked as no longer current from `time` on. */
function invalidated(json: string, time: number): FeatureWrite {
  const parts = parseStoredFeature(json);
  return featureTexts({
    ...parts,
    properties: { ...parts.properties, [LOG_NS]: { ...logMembers(parts), invalidatedAt: time } },
    namespace: { ...parts.namespace, updatedAt: time },
  }).stored;
}

/**
 * The log step of a planned write: it reads the log features of the states the write replaces (their ids
 * are the stored features' uuids), appends one log feature per change, marks the replaced ones invalidated
 * when asked, and chains a step deleting the states beyond `states`. Undefined when the write changes nothing.
 */
function logStep(log: ActivityLog, plan: WritePlan, existing: ReadonlyMap<string, string>, then: WriteStep | undefined): WriteStep | undefined {
  const changes = changesOf(plan, existing);
  if (changes.length === 0) return then;
  const previousIds = changes.flatMap((change) => (change.before?.namespace.uuid === undefined ? [] : [change.before.namespace.uuid]));
  const time = plan.timestamp;
  return {
    space: log.log.key,
    ids: previousIds,
    planner: (previous) => {
      const upserts: FeatureWrite[] = [];
      const pruned: string[] = [];
      for (const change of changes) {
        const previousId = change.before?.namespace.uuid;
        const previousJson = previousId === undefined ? undefined : previous.get(previousId);
        const kept = previousJson === undefined ? [] : logMembers(parseStoredFeature(previousJson)).states;
        const stateId = change.after?.namespace.uuid ?? randomUUID();
        const states = [...(Array.isArray(kept) ? kept.filter((id): id is string => typeof id === 'string') : []), stateId];
        const dropped = states.splice(0, Math.max(0, states.length - log.config.states));
        pruned.push(...dropped);
        upserts.push(logFeature(log, change, stateId, states, time));
        if (log.config.writeInvalidatedAt && previousJson !== undefined && !dropped.includes(previousId as string)) {
          upserts.push(invalidated(previousJson, time));
        }
      }
      const next: WriteStep | undefined = pruned.length === 0 ? then : {
        space: log.log.key,
        ids: pruned,
        planner: () => ({ plan: { upserts: [], deletes: pruned, timestamp: time }, next: then }),
      };
      return { plan: { upserts, deletes: [], timestamp: time }, next };
    },
  };
}

/**
 * The planned write with its log appended in the same transaction, before the steps the write already chains.
 * `plan` is what the write means to the space (a composite's deletes are deletes, though it stores tombstones);
 * `existing` the states it replaces.
 */
export function withActivityLog<P extends { plan: WritePlan; next?: WriteStep }>(log: ActivityLog | undefined, planned: P,
  existing: ReadonlyMap<string, string>, plan: WritePlan = planned.plan): P {
  if (!log) return planned;
  return { ...planned, next: logStep(log, plan, existing, planned.next) };
}
