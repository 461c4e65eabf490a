// The merge step of the write pipeline: a feature written from the version it was read at (its ORIGIN), which HEAD has changed since, is merged three ways or refused (ADR 002, "Merges").
import type { ErrorCode, ErrorParams } from '../../core/errors.js';
import type { Geometry } from '../../geo/geometry.js';
import { pad3D } from '../../geo/coordinates.js';
import type { OriginStates } from '../../storage/storage.js';
import { type FeatureParts, parseStoredFeature } from '../feature-text.js';
import { type ConflictRule, type Conflicts, mergeObjects, mergeValues } from '../three-way-merge.js';
import { keepsHistory, oldestReadable } from '../versions/space-versions.js';
import type { LayerTargets } from './layer-targets.js';
import type { WriteEntry } from './write-plan.js';

/** What a feature holds apart from its id and the server's namespace members: what a write edits and a merge compares. */
export interface FeatureState {
  geometry: Geometry | null;
  properties: Record<string, unknown>;
  /** Foreign members at the feature root. */
  extra: Record<string, unknown>;
  tags: string[];
}

/** A feature whose ORIGIN HEAD has moved past: its state then (undefined when it had none), or why it cannot be merged. */
export type StaleOrigin =
  | { origin: number; head: number; base: FeatureState | undefined }
  | { refusal: { code: ErrorCode; params: ErrorParams } };

/** For one planning: a feature's stale ORIGIN given its stored (HEAD) state, undefined when it has none or HEAD has not changed it since. */
export type OriginCheck = (entry: WriteEntry, stored: FeatureParts) => StaleOrigin | undefined;

export const stateOf = (parts: FeatureParts): FeatureState =>
  ({ geometry: parts.geometry, properties: parts.properties, extra: parts.extra, tags: parts.namespace.tags });

/**
 * The ORIGINs of a write, known before its transaction: the namespace `version` of each feature written to a layer
 * that keeps history, if the namespace names that layer (or no space): a feature copied from another space carries
 * that space's version, which says nothing of this one. The storage reads their states under the layers' version
 * locks, so HEAD cannot move between the decision and the commit. (A virtual space's upstreams other than the
 * write's primary one are planned from their features as read ahead of the transaction, as every write through it.)
 */
export class MergePolicy {
  /** By the `sid` of the layer: id → ORIGIN. */
  readonly origins = new Map<number, Map<string, number>>();

  constructor(private readonly targets: LayerTargets, entries: readonly WriteEntry[]) {
    const { location } = targets.layers[targets.primary].key;
    for (const { id, feature } of entries) {
      const layer = targets.layers[targets.targetOf(id)];
      // A layer in another database refuses the write anyway, and its sids are not this database's.
      if (feature?.version === undefined || !keepsHistory(layer.definition) || layer.key.location !== location) continue;
      if (feature.versionOf !== undefined && feature.versionOf !== layer.id) continue;
      const ofLayer = this.origins.get(layer.key.sid) ?? new Map<string, number>();
      ofLayer.set(id, feature.version);
      this.origins.set(layer.key.sid, ofLayer);
    }
  }

  /** The check of one planning, from the states the storage read in its transaction (it may plan a transaction again). */
  start(states: ReadonlyMap<number, OriginStates>): OriginCheck | undefined {
    if (states.size === 0) return undefined;
    return (entry, stored) => {
      const layer = this.targets.layers[this.targets.targetOf(entry.id)];
      const origin = this.origins.get(layer.key.sid)?.get(entry.id);
      const ofLayer = states.get(layer.key.sid);
      if (origin === undefined || !ofLayer?.states.has(entry.id)) return undefined;
      const oldest = oldestReadable(layer.definition, ofLayer.versions);
      if (origin < oldest) return { refusal: { code: 'originNotKept', params: { id: entry.id, origin, oldest } } };
      const base = ofLayer.states.get(entry.id);
      const head = stored.namespace.version ?? ofLayer.versions.head;
      return { origin, head, base: base === null || base === undefined ? undefined : stateOf(parseStoredFeature(base)) };
    };
  }
}

/** The state of a feature that had none at its ORIGIN: what both sides changed from. */
export const EMPTY_STATE: FeatureState = { geometry: null, properties: {}, extra: {}, tags: [] };

/**
 * HEAD and the written state merged from their common base (no state: an empty feature): per member of the properties
 * and the root, nested objects member by member; the geometry and the tag list each as one value. Stored geometries
 * have 3D positions, so the written one is compared padded and, where it is taken, stored as written.
 */
export function mergeStates(base: FeatureState | undefined, head: FeatureState, written: FeatureState, rule: ConflictRule):
  { state: FeatureState } | { conflicts: Conflicts } {
  const from = base ?? EMPTY_STATE;
  const conflicts: Conflicts = [];
  const paddedGeometry = written.geometry && pad3D(written.geometry);
  const geometry = mergeValues(from.geometry, head.geometry, paddedGeometry, 'geometry', rule, conflicts, false);
  const properties = mergeObjects(from.properties, head.properties, written.properties, 'properties', rule, conflicts);
  const tags = mergeValues(from.tags, head.tags, written.tags, 'tags', rule, conflicts, false) as string[];
  const extra = mergeObjects(from.extra, head.extra, written.extra, '', rule, conflicts);
  if (conflicts.length > 0) return { conflicts };
  return { state: { geometry: geometry === paddedGeometry ? written.geometry : geometry as Geometry | null, properties, extra, tags } };
}
