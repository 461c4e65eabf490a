// One space as one request touches it: resolved once with its layers and their logs, and the only way to read their features, each read decided first.
import { hubError } from '../../core/errors.js';
import type { FeatureRow } from '../../core/feature-query.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { AccessRecord, decide, type SpaceRef, subscriptionAccess, type WriteActions } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';
import { type ActivityLog, activityLogOf } from '../activity-log/activity-log.js';
import { type FeatureSource, PlainSource, type PrefetchedArea } from '../feature-source.js';
import { LayeredSource, versionsByLayer } from '../layers/layered-source.js';
import { DECISION_LIFETIME_MS, DecidedPages } from './decided-pages.js';
import { refuseReadOnlySpace } from '../writes/read-only-policy.js';
import type { Layering } from '../layers/space-layout.js';

/** Whether a request's token is still good (AccessService.stillValid): a long read that outlives it stops. */
export interface TokenCheck {
  stillValid(claims: Claims): Promise<boolean>;
}

/**
 * A request's view of one space. Every feature it reads goes through `reader`, `versions` or `deletable`, which
 * record what the request does to each space and have authorization.ts decide before anything is read: a path
 * that forgets to ask cannot read. Writes record their plan's actions through `decideWriter` and `decideWrite`.
 */
export class SpaceScope {
  private source?: FeatureSource;
  private readonly logs = new Map<string, Promise<ActivityLog | undefined>>();

  /** When the spaces' rows were read: what is decided on them holds for DECISION_LIFETIME_MS (decided-pages.ts). */
  private readonly openedAt = Date.now();

  /** `prefetched`, read with the space's lookup, goes to the reader of a plain space only, once the read is granted. */
  constructor(private readonly storage: Storage, private readonly tokens: TokenCheck, readonly caller: Claims, readonly space: StoredSpace,
    readonly layering: Layering, private readonly prefetched?: PrefetchedArea) {}

  /** Every space whose features a read of this one sees: the space and each layer. */
  private get shown(): StoredSpace[] {
    return this.layering.kind === 'plain' ? [this.space] : [this.space, ...this.layering.layers.filter((layer) => layer.id !== this.space.id)];
  }

  /** What a feature read of the space sees, once the caller may read every space it shows. */
  reader(): FeatureSource {
    if (this.source) return this.source;
    decide(this.caller, readingAll(this.shown));
    this.source = new DecidedPages(this.sourceOf(), () => this.decideAgain(readingAll), this.openedAt);
    return this.source;
  }

  /**
   * A read decided again on the spaces it shows and the caller's token as they are stored now (decided-pages.ts), with
   * what it needs of the spaces: a space gone since, or the token deleted or expired since, ends it, as it ends an event
   * stream (event-feed.ts).
   */
  private async decideAgain(needs: (shown: readonly StoredSpace[]) => AccessRecord): Promise<void> {
    const [valid, ...now] = await Promise.all([this.tokens.stillValid(this.caller), ...this.shown.map((space) => this.storage.spaces.get(space.id))]);
    if (!valid) throw hubError('invalidCredentials');
    const stored: StoredSpace[] = [];
    for (const [index, space] of now.entries()) {
      if (!space || space.key.sid !== this.shown[index].key.sid) throw hubError('spaceOfFeaturesNotFound');
      stored.push(space);
    }
    decide(this.caller, needs(stored));
  }

  /** Only ever called right after a decision. */
  private sourceOf(): FeatureSource {
    const { layering } = this;
    return layering.kind === 'plain'
      ? new PlainSource(this.storage, this.space, this.prefetched)
      : new LayeredSource(this.storage, this.space, layering.layers, layering.kind === 'virtual' ? layering.combination : 'override', layering.kind === 'composite');
  }

  /** The text the space shows for one id, undefined when it shows none; read only once granted. */
  async readOne(featureId: string): Promise<string | undefined> {
    for await (const rows of this.reader().query({ ids: [featureId], limit: 1 })) return rows[0]?.json;
    return undefined;
  }

  get layers(): readonly StoredSpace[] {
    return this.layering.kind === 'plain' ? [this.space] : this.layering.layers;
  }

  /**
   * The stored versions of ids in every layer, for a write through a layered space: the plan sees them and may
   * answer them, and whether an id exists changes the answer, so every layer must be readable before any is read.
   */
  async versions(ids: string[]): Promise<Array<Map<string, FeatureRow>>> {
    // A write may have spent a while since the scope opened (validating a large body): the layers are then decided on
    // their rows as stored now, as a read's pages are (decided-pages.ts), so that it reads nothing of a layer unshared meanwhile.
    if (this.layering.kind !== 'plain' && Date.now() - this.openedAt > DECISION_LIFETIME_MS) await this.decideAgain(readingBelow);
    else decide(this.caller, readingBelow(this.shown));
    return versionsByLayer(this.storage, this.layers, ids);
  }

  /** A write is about to start: before its plan looks at anything stored (see AccessRecord.writer). */
  decideWriter(): void {
    decide(this.caller, new AccessRecord().writer(this.space));
  }

  /**
   * A write to the space is asked for: decided as `decideWriter`, then a read-only space refuses it. The flag is part of
   * the definition, told only to a caller holding some feature right on the space (a 405 before the 403 would tell
   * anyone which private spaces are read-only, activity logs among them).
   */
  writable(): void {
    this.decideWriter();
    refuseReadOnlySpace(this.space);
  }

  /**
   * An import job into the space, decided when it is created, started or looked at: what each of its chunks will need
   * before its plan is made (`writable`, and readFeatures on every layer below, as `versions` decides for any write
   * through a layered space), with the creates and replaces it plans on the space. A job the chunks would all refuse is
   * refused at once, as an export of a space the caller may no longer read is.
   */
  importable(): void {
    this.writable();
    const record = new AccessRecord().write(this.space, { inserts: true, updates: true, deletes: false, answersStored: false });
    for (const layer of this.layers) if (layer.id !== this.space.id) record.read(layer);
    decide(this.caller, record);
  }

  /** In the write's transaction, once its plan is known: the plan's actions on the space and on each layer it changes. */
  decideWrite(actions: WriteActions, changed: readonly SpaceRef[] = []): void {
    const record = new AccessRecord().write(this.space, actions);
    for (const layer of changed) if (layer.id !== this.space.id) record.write(layer, actions);
    decide(this.caller, record);
  }

  /**
   * A delete by filter (`DELETE /features?tags=`), before its features are looked at: deleteFeatures on the space
   * and, through a layered space, readFeatures on every layer below (they decide where the deletes go). Returns
   * the source the deleted ids are found in: finding them answers nothing but how many were deleted. Its pages are
   * decided again as a read's are (decided-pages.ts): a delete through a layered space goes a page at a time, and
   * one still running when a layer is unshared must not find, count and hide what its owner writes after.
   */
  deletable(): FeatureSource {
    decide(this.caller, deletingThrough(this.shown));
    return new DecidedPages(this.sourceOf(), () => this.decideAgain(deletingThrough), this.openedAt);
  }

  /**
   * The space's own history (ADR 002), once the caller may read it (changesets, tags: readFeatures, as its features)
   * or change it (`DELETE /changesets`, tag writes: manageSpaces). Decided before anything is looked at; a virtual or
   * composite space has no history of its own (each layer has its versions), a clear 400 to a caller with the right.
   */
  history(change: boolean): FeatureSource {
    decide(this.caller, change ? new AccessRecord().onSpace('manageSpaces', this.space) : new AccessRecord().read(this.space));
    if (this.layering.kind !== 'plain') throw hubError('historyOfLayers');
    return new PlainSource(this.storage, this.space);
  }

  /**
   * The space's webhook subscriptions (docs/subscriptions.md), decided before anything is looked at
   * (`subscriptionAccess`). They are delivered from the space's own history, which a virtual or composite space does
   * not have.
   */
  subscriptions(sends: boolean): StoredSpace {
    decide(this.caller, subscriptionAccess(this.space, sends));
    if (this.layering.kind !== 'plain') throw hubError('subscriptionOfLayers');
    return this.space;
  }

  /** The activity log of the space or one of its layers, looked up once per request. */
  logOf(space: StoredSpace): Promise<ActivityLog | undefined> {
    let log = this.logs.get(space.id);
    if (!log) {
      log = activityLogOf(this.storage, space);
      this.logs.set(space.id, log);
    }
    return log;
  }
}

/** A read needs readFeatures on every space it shows. */
function readingAll(shown: readonly SpaceRef[]): AccessRecord {
  const record = new AccessRecord();
  for (const space of shown) record.read(space);
  return record;
}

/** A write through a layered space reads every layer below it (which one holds an id decides where it goes). */
function readingBelow([, ...below]: readonly SpaceRef[]): AccessRecord {
  return readingAll(below);
}

/** A delete by filter needs deleteFeatures on the space (shown first) and readFeatures on every layer below it. */
function deletingThrough([space, ...below]: readonly SpaceRef[]): AccessRecord {
  const record = new AccessRecord().onSpace('deleteFeatures', space);
  for (const layer of below) record.read(layer);
  return record;
}
