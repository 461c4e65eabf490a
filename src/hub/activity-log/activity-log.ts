// Appends the activity log of a write: one log feature per changed feature, as further steps of the write's transaction.
import { randomUUID } from 'node:crypto';
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { FeatureWrite, Storage, StoredSpace, WriteStep } from '../../storage/storage.js';
import type { FeatureChange } from '../feature-change.js';
import { type FeatureParts, featureTexts, parseStoredFeature } from '../feature-text.js';
import { type ActivityLogConfig, logListenerOf } from './log-listener.js';
import { logSourceOf } from './log-spaces.js';
import { stateDiff } from './state-diff.js';

/** The namespace of a log feature's own members (docs/decisions.md, "Activity log"). */
export const LOG_NS = '@ns:com:here:xyz:log';

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

function logMembers(parts: FeatureParts): Record<string, unknown> {
  const log = parts.properties[LOG_NS];
  return isObject(log) ? log : {};
}

/** The log feature of one change; `states` lists the log ids kept for the feature, this one last. */
function logFeature(log: ActivityLog, change: FeatureChange, stateId: string, states: string[], time: number): FeatureWrite {
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
function invalidated(parts: FeatureParts, time: number): FeatureWrite {
  return featureTexts({
    ...parts,
    properties: { ...parts.properties, [LOG_NS]: { ...logMembers(parts), invalidatedAt: time } },
    namespace: { ...parts.namespace, updatedAt: time },
  }).stored;
}

/**
 * The log step of a write to the logged space: it reads the log features of the states the write replaces (their
 * ids are the stored features' uuids), appends one log feature per change, marks the replaced ones invalidated
 * when asked, and chains a step deleting the states beyond `states`, then `then`. `changes` are what the write
 * means to the space (a composite's deletes are deletes, though it stores tombstones), at `time`. Just `then`
 * when the space has no log or the write changes nothing.
 */
export function activityLogStep(log: ActivityLog | undefined, changes: readonly FeatureChange[], time: number, then: WriteStep | undefined): WriteStep | undefined {
  if (!log || changes.length === 0) return then;
  const previousIds = changes.flatMap((change) => (change.before?.namespace.uuid === undefined ? [] : [change.before.namespace.uuid]));
  return {
    space: log.log.key,
    ids: previousIds,
    planner: (previous) => {
      const upserts: FeatureWrite[] = [];
      const pruned: string[] = [];
      for (const change of changes) {
        const previousId = change.before?.namespace.uuid;
        const previousJson = previousId === undefined ? undefined : previous.get(previousId);
        const previousLog = previousJson === undefined ? undefined : parseStoredFeature(previousJson);
        const kept = previousLog === undefined ? [] : logMembers(previousLog).states;
        const stateId = change.after?.namespace.uuid ?? randomUUID();
        const states = [...(Array.isArray(kept) ? kept.filter((id): id is string => typeof id === 'string') : []), stateId];
        const dropped = states.splice(0, Math.max(0, states.length - log.config.states));
        pruned.push(...dropped);
        upserts.push(logFeature(log, change, stateId, states, time));
        if (log.config.writeInvalidatedAt && previousLog !== undefined && !dropped.includes(previousId as string)) {
          upserts.push(invalidated(previousLog, time));
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
