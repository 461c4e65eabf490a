// Decides, feature by feature, what a write does given the stored state (API.md 4.4–4.6).
import { randomUUID } from 'node:crypto';
import type { Geometry } from '../../geo/geometry.js';
import { pad3D } from '../../geo/coordinates.js';
import type { FeatureWrite, WritePlan } from '../../storage/storage.js';
import type { WriteActions } from '../access/authorization.js';
import { type ErrorCode, type ErrorParams, type HubError, hubError } from '../../core/errors.js';
import { applyPatch, deepEqual } from '../merge-patch.js';
import type { FeatureInput } from './feature-input.js';
import type { FeatureChange } from '../feature-change.js';
import { featureTexts, type FeatureParts, parseStoredFeature } from '../feature-text.js';
import type { Namespace } from '../namespace.js';
import { EMPTY_STATE, type FeatureState, mergeStates, type OriginCheck, type StaleOrigin, stateOf } from './merge-policy.js';

export type OnExists = 'patch' | 'replace' | 'merge' | 'delete' | 'retain' | 'error';
/** `notFound` is the single-feature routes' rule: a missing feature is a 404, not a per-feature failure. */
export type OnNotExists = 'create' | 'retain' | 'error' | 'notFound';
export type OnConflict = 'error' | 'retain' | 'replace';

export interface WriteEntry {
  id: string;
  position: number;
  /** Absent for id-only entries (deletes by id, modification lists with `featureIds`). */
  feature?: FeatureInput;
  onExists: OnExists;
  onNotExists: OnNotExists;
  onConflict: OnConflict;
  /** Tags the space's tagging rules gave the feature: added last, after addTags/removeTags. */
  ruleTags?: string[];
}

export interface WriteOptions {
  transactional: boolean;
  /** False when the client wants no body (`Accept: application/x-empty`): no response texts are built. */
  respond: boolean;
  addTags: string[];
  removeTags: string[];
}

export interface SpaceContext {
  id: string;
  enableUUID: boolean;
  /** Sees each feature as it will be stored (the space's schema check). */
  check?: (feature: FeatureParts, entry: WriteEntry) => void;
  /** The space a feature is stored in when it is not `id` (writes through a virtual space go to an upstream). */
  spaceOf?: (featureId: string) => string;
  /**
   * Whether a step after the features reads the plan's changes (an activity log): only then are they kept, since
   * keeping 10,000 features' parts until the transaction ends costs a plain write more garbage collection.
   */
  keepChanges: boolean;
  /** A feature's stale ORIGIN, if it was read at a version HEAD has changed it since (merge-policy.ts). */
  originOf?: OriginCheck;
  /** The version a feature is written at and its author, where its space keeps history (ADR 002). */
  stampOf?: (featureId: string) => { version: number; author: string } | undefined;
}

export interface Failure { id: string; position: number; message: string }

/** What a write does (the storage's plan), what it answers, and the feature actions it needs rights for. */
export interface PlannedWrite {
  plan: WritePlan;
  /** Each feature the plan inserts or updates (in the order of its upserts), then each it deletes: parsed once, here; empty unless kept. */
  changes: FeatureChange[];
  result: WriteResult;
  actions: WriteActions;
  /**
   * Why a transactional write fails as a whole (a 404 of the single-feature routes, a 409, a failed feature),
   * if it does: thrown only after the rights of what was planned up to it are decided, so that a caller who
   * may not do that learns nothing from it. Planning stops at it.
   */
  refusal?: HubError;
}

export interface WriteResult {
  /** Response texts: inserted, then updated, then unmodified features. */
  features: string[];
  inserted: string[];
  updated: string[];
  deleted: string[];
  failed: Failure[];
}

const hasTagParameters = (options: WriteOptions): boolean => options.addTags.length > 0 || options.removeTags.length > 0;

/** The given tag list, else `fallback`, then `addTags` and `removeTags` in that order (API.md 4.5), then the rule tags. */
function resultTags(given: string[] | undefined, fallback: string[], options: WriteOptions, ruleTags: string[] = []): string[] {
  // The common case, a tag list as sent and nothing to add or remove: the feature's own normalized list (feature-input.ts
  // makes a new one per feature), without two copies of it per feature.
  if (given !== undefined && ruleTags.length === 0 && !hasTagParameters(options)) return given;
  const tags = [...(given ?? fallback)];
  for (const tag of options.addTags) if (!tags.includes(tag)) tags.push(tag);
  const kept = tags.filter((tag) => !options.removeTags.includes(tag));
  for (const tag of ruleTags) if (!kept.includes(tag)) kept.push(tag);
  return kept;
}

class Planner {
  private readonly upserts: FeatureWrite[] = [];
  private readonly deletes: string[] = [];
  private readonly stored: FeatureChange[] = [];
  private readonly deleted: FeatureChange[] = [];
  private readonly result: WriteResult = { features: [], inserted: [], updated: [], deleted: [], failed: [] };
  private readonly updatedTexts: string[] = [];
  private readonly unmodifiedTexts: string[] = [];
  private readonly actions: WriteActions = { inserts: false, updates: false, deletes: false, answersStored: false };

  constructor(
    private readonly space: SpaceContext,
    private readonly options: WriteOptions,
    private readonly now: number,
  ) {}

  private refusal?: HubError;

  private fail(entry: WriteEntry, code: ErrorCode, params: ErrorParams): void {
    const error = hubError(code, params);
    if (this.options.transactional) {
      this.refusal = error;
      return;
    }
    this.result.failed.push({ id: entry.id, position: entry.position, message: error.message });
  }

  private namespace(id: string, tags: string[], stored?: Namespace): Namespace {
    const namespace: Namespace = {
      space: this.space.spaceOf?.(id) ?? this.space.id,
      createdAt: stored?.createdAt ?? this.now,
      updatedAt: this.now,
      tags,
    };
    if (this.space.enableUUID) {
      namespace.uuid = randomUUID();
      if (stored?.uuid) namespace.puuid = stored.uuid;
    }
    const stamp = this.space.stampOf?.(id);
    if (stamp) {
      namespace.version = stamp.version;
      namespace.author = stamp.author;
    }
    return namespace;
  }

  /** `before` is the stored state an update replaces. */
  private store(entry: WriteEntry, parts: FeatureParts, list: 'inserted' | 'updated', before?: FeatureParts): void {
    this.space.check?.(parts, entry);
    const texts = featureTexts(parts);
    this.upserts.push(texts.stored);
    if (this.space.keepChanges) {
      const after = { ...parts, geometry: texts.storedGeometry };
      this.stored.push(before ? { id: parts.id, operation: 'update', before, after } : { id: parts.id, operation: 'insert', after });
    }
    this.result[list].push(parts.id);
    if (list === 'inserted') this.actions.inserts = true;
    else this.actions.updates = true;
    if (this.options.respond) (list === 'inserted' ? this.result.features : this.updatedTexts).push(texts.response());
  }

  private create(entry: WriteEntry, feature: FeatureInput): void {
    this.store(entry, {
      id: entry.id,
      geometry: feature.geometry ?? null,
      properties: feature.properties ?? {},
      namespace: this.namespace(entry.id, resultTags(feature.tags, [], this.options, entry.ruleTags)),
      extra: feature.extra,
    }, 'inserted');
  }

  /**
   * What an edit makes of a state (the stored one, or the one at the feature's ORIGIN): a patch merged into it, or the
   * input replacing it, which starts from no tags unless addTags/removeTags ask to edit the state's (API.md 4.5).
   */
  private edited(entry: WriteEntry, feature: FeatureInput, from: FeatureState, patching: boolean): FeatureState {
    if (!patching) {
      const tags = resultTags(feature.tags, hasTagParameters(this.options) ? from.tags : [], this.options, entry.ruleTags);
      return { geometry: feature.geometry ?? null, properties: feature.properties ?? {}, extra: feature.extra, tags };
    }
    const before = { geometry: from.geometry, properties: from.properties, ...from.extra };
    const input: Record<string, unknown> = { ...feature.extra };
    if (feature.geometry !== undefined) input.geometry = feature.geometry;
    if (feature.properties !== undefined) input.properties = feature.properties;
    const { result } = applyPatch(before, input);
    const { geometry, properties, ...extra } = result;
    const tags = resultTags(feature.tags, from.tags, this.options, entry.ruleTags);
    return { geometry: (geometry ?? null) as Geometry | null, properties: (properties ?? {}) as Record<string, unknown>, extra, tags };
  }

  private partsOf(id: string, state: FeatureState, stored: FeatureParts): FeatureParts {
    return { id, geometry: state.geometry, properties: state.properties, namespace: this.namespace(id, state.tags, stored.namespace), extra: state.extra };
  }

  private replace(entry: WriteEntry, feature: FeatureInput, stored: FeatureParts): void {
    const state = this.edited(entry, feature, stateOf(stored), false);
    this.store(entry, this.partsOf(entry.id, state, stored), 'updated', stored);
  }

  /** An update that may change nothing (a patch, a merge): then it is reported, not made. */
  private update(entry: WriteEntry, state: FeatureState, stored: FeatureParts, storedJson: string): void {
    // The geometry stays as written for the answer; stored positions are 3D, so compare it padded.
    const unchanged = deepEqual({ geometry: state.geometry && pad3D(state.geometry), properties: state.properties, ...state.extra },
      { geometry: stored.geometry, properties: stored.properties, ...stored.extra });
    // The answer is the stored feature with the edit merged in: the caller reads it.
    if (this.options.respond) this.actions.answersStored = true;
    if (unchanged && deepEqual(state.tags, stored.namespace.tags)) {
      // Still an update as far as rights go: whether it changes anything must not depend on who asks.
      this.actions.updates = true;
      this.unmodifiedTexts.push(storedJson);
      return;
    }
    this.store(entry, this.partsOf(entry.id, state, stored), 'updated', stored);
  }

  /**
   * A feature HEAD changed after its ORIGIN (merge-policy.ts): a replace or delete would undo changes its writer never
   * saw, so it is refused; a patch or merge applies to the state at ORIGIN and is merged with HEAD's changes since.
   * Refusals name HEAD's version or members, so the caller reads the stored feature.
   */
  private fromOrigin(entry: WriteEntry, feature: FeatureInput, action: OnExists, stored: FeatureParts, storedJson: string,
    stale: StaleOrigin): void {
    this.actions.answersStored = true;
    if ('refusal' in stale) return this.fail(entry, stale.refusal.code, stale.refusal.params);
    const { origin, head, base } = stale;
    if (action !== 'patch' && action !== 'merge') {
      return this.fail(entry, 'versionConflict', { id: entry.id, operation: action === 'delete' ? 'deleted' : 'replaced', origin, head });
    }
    const written = this.edited(entry, feature, base ?? EMPTY_STATE, action === 'patch');
    const merged = mergeStates(base, stateOf(stored), written, entry.onConflict);
    if ('conflicts' in merged) return this.fail(entry, 'mergeConflict', { id: entry.id, origin, head, members: merged.conflicts.join(', ') });
    this.update(entry, merged.state, stored, storedJson);
  }

  /** A stored feature answered as it is: the caller reads it (`e=retain` needs readFeatures). */
  private retain(storedJson: string): void {
    this.actions.answersStored = true;
    this.unmodifiedTexts.push(storedJson);
  }

  private onMissing(entry: WriteEntry): void {
    switch (entry.onNotExists) {
      case 'notFound':
        this.refusal = hubError('featureNotFound');
        return;
      case 'error': return this.fail(entry, 'featureMissing', { id: entry.id });
      case 'retain': return;
      case 'create':
        if (entry.feature) this.create(entry, entry.feature);
    }
  }

  private onExisting(entry: WriteEntry, storedJson: string): void {
    const stored = parseStoredFeature(storedJson);
    let action = entry.onExists;
    const conflict = entry.feature?.uuid !== undefined && stored.namespace.uuid !== undefined
      && entry.feature.uuid !== stored.namespace.uuid && action !== 'retain' && action !== 'error';
    if (conflict) {
      // Without history the merge base is the head, so a stale uuid on merge is a merge conflict that `cr` resolves.
      const resolution = action === 'merge' ? entry.onConflict : 'error';
      if (resolution === 'error') {
        // The refusal names the stored uuid: the caller reads it.
        this.actions.answersStored = true;
        return this.fail(entry, 'uuidMismatch', { id: entry.id, uuid: stored.namespace.uuid as string });
      }
      action = resolution === 'retain' ? 'retain' : 'replace';
    }
    const feature = entry.feature;
    if (feature && action !== 'retain' && action !== 'error') {
      const stale = this.space.originOf?.(entry, stored);
      if (stale) return this.fromOrigin(entry, feature, action, stored, storedJson, stale);
    }
    switch (action) {
      case 'error': return this.fail(entry, 'featureExists', { id: entry.id });
      case 'retain': return this.retain(storedJson);
      case 'delete':
        this.actions.deletes = true;
        this.deletes.push(entry.id);
        if (this.space.keepChanges) this.deleted.push({ id: entry.id, operation: 'delete', before: stored });
        this.result.deleted.push(entry.id);
        return;
      case 'replace':
      case 'merge':
        if (feature) this.replace(entry, feature, stored);
        else this.retain(storedJson);
        return;
      case 'patch':
        if (feature) this.update(entry, this.edited(entry, feature, stateOf(stored), true), stored, storedJson);
        else this.retain(storedJson);
    }
  }

  run(entries: readonly WriteEntry[], existing: ReadonlyMap<string, string>): PlannedWrite {
    for (const entry of entries) {
      if (this.refusal) break;
      const storedJson = existing.get(entry.id);
      if (storedJson === undefined) this.onMissing(entry);
      else this.onExisting(entry, storedJson);
    }
    this.result.features.push(...this.updatedTexts, ...this.unmodifiedTexts);
    const plan = { upserts: this.upserts, deletes: this.deletes, timestamp: this.now };
    return { plan, changes: [...this.stored, ...this.deleted], result: this.result, actions: this.actions, refusal: this.refusal };
  }
}

export function planWrite(
  space: SpaceContext,
  entries: readonly WriteEntry[],
  options: WriteOptions,
  existing: ReadonlyMap<string, string>,
): PlannedWrite {
  return new Planner(space, options, Date.now()).run(entries, existing);
}
