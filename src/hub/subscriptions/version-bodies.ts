// The bodies a subscription POSTs for one version, by its type: one per changed feature, one per version, or one notice of what changed.
import { geometryBBox, type BBox } from '../../geo/bbox.js';
import type { Geometry } from '../../geo/geometry.js';
import type { ChangeKind, SpaceKey, Storage, SubscriptionRecord, VersionRecord } from '../../storage/storage.js';
import { CHANGE_KINDS } from '../versions/changeset-stream.js';
import type { FeatureFilter } from './subscription-filter.js';

export const SUBSCRIPTION_TYPES = ['PER_FEATURE', 'PER_TRANSACTION', 'CONTENT_CHANGE'] as const;
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number];

/** States read per storage query, and the most a PER_TRANSACTION or CONTENT_CHANGE body holds: a larger version is sent in parts. */
export const PART_SIZE = 1000;

type State = { id?: unknown; geometry?: Geometry | null } & Record<string, unknown>;

interface Change {
  kind: ChangeKind;
  state: State;
}

/**
 * The states the features of `ids` had right before `version` changed them: for each, the oldest of its states that
 * ended at `version` or later, which is the one `version` replaced.
 */
async function statesBefore(storage: Storage, space: SpaceKey, ids: string[], version: number): Promise<Map<string, State>> {
  const before = new Map<string, State>();
  for (const row of await storage.features.featureStates(space, ids, version - 1)) {
    const state = JSON.parse(row.json) as State;
    const id = String(state.id);
    if (!before.has(id)) before.set(id, state);
  }
  return before;
}

/**
 * The changes of one version the filter keeps, in changeset order (inserted, updated, deleted; by insertion sequence),
 * a page at a time. An update is kept when the feature passes the filter after it or passed it before: a feature
 * moved out of the area (or out of the JSONPath's selection) is delivered too.
 */
async function* changesOf(storage: Storage, space: SpaceKey, version: number, filter: FeatureFilter): AsyncIterable<Change[]> {
  for (const kind of CHANGE_KINDS) {
    for (let after = { version, seq: 0 }; ;) {
      const rows = await storage.history.changes(space, kind, after, version, PART_SIZE);
      const states = rows.map((row) => JSON.parse(row.json) as State);
      const kept = filter.keeps(states);
      const missed = states.filter((_, index) => !kept[index]);
      if (kind === 'updated' && missed.length > 0) {
        const before = await statesBefore(storage, space, missed.map((state) => String(state.id)), version);
        const keptBefore = filter.keeps(states.map((state) => before.get(String(state.id)) ?? state));
        keptBefore.forEach((keep, index) => { kept[index] ||= keep; });
      }
      const changes = states.flatMap((state, index) => (kept[index] ? [{ kind, state }] : []));
      if (changes.length > 0) yield changes;
      if (rows.length < PART_SIZE) break;
      after = { version, seq: rows[rows.length - 1].seq };
    }
  }
}

/** The changes in parts of at most PART_SIZE, each told whether it is the version's last. */
async function* partsOf(changes: AsyncIterable<Change[]>): AsyncIterable<{ changes: Change[]; last: boolean }> {
  let pending: Change[] = [];
  for await (const page of changes) {
    for (const change of page) {
      if (pending.length === PART_SIZE) {
        yield { changes: pending, last: false };
        pending = [];
      }
      pending.push(change);
    }
  }
  if (pending.length > 0) yield { changes: pending, last: true };
}

const collection = (changes: Change[], kind: ChangeKind) => ({ type: 'FeatureCollection', features: changes.filter((change) => change.kind === kind).map((change) => change.state) });

function boundsOf(changes: Change[]): BBox | null {
  let bounds: BBox | null = null;
  for (const { state } of changes) {
    const box = state.geometry ? geometryBBox(state.geometry) : null;
    if (!box) continue;
    bounds = bounds ? [Math.min(bounds[0], box[0]), Math.min(bounds[1], box[1]), Math.max(bounds[2], box[2]), Math.max(bounds[3], box[3])] : box;
  }
  return bounds;
}

/**
 * The JSON bodies of one version for the subscription, in the order they are to be sent. A version none of whose
 * changes the filter keeps has none. Each carries the subscription, the space, the version, its author and time.
 */
export async function* versionBodies(storage: Storage, space: SpaceKey, subscription: SubscriptionRecord, record: VersionRecord,
  filter: FeatureFilter): AsyncIterable<string> {
  const envelope = { subscriptionId: subscription.id, space: subscription.spaceId, version: record.version, author: record.author, createdAt: record.createdAt };
  const changes = changesOf(storage, space, record.version, filter);
  if (subscription.type === 'PER_FEATURE') {
    for await (const page of changes) {
      for (const change of page) yield JSON.stringify({ type: 'FeatureChange', ...envelope, action: change.kind, feature: change.state });
    }
    return;
  }
  let part = 0;
  for await (const { changes: chunk, last } of partsOf(changes)) {
    part++;
    const parts = { part, lastPart: last };
    yield JSON.stringify(subscription.type === 'PER_TRANSACTION'
      ? { type: 'Changeset', ...envelope, ...parts, inserted: collection(chunk, 'inserted'), updated: collection(chunk, 'updated'), deleted: collection(chunk, 'deleted') }
      : {
        type: 'ContentChange', ...envelope, ...parts,
        ...Object.fromEntries(CHANGE_KINDS.map((kind) => [kind, chunk.filter((change) => change.kind === kind).map((change) => change.state.id)])),
        bbox: boundsOf(chunk),
      });
  }
}
