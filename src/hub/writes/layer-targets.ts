// Which layer each feature of a write goes to, and what each layer stores: a plain space is a layering of one.
import type { FeatureRow } from '../../core/feature-query.js';
import type { FeatureWrite, StoredSpace, WritePlan } from '../../storage/storage.js';
import type { FeatureChange } from '../feature-change.js';
import { parseStoredFeature } from '../feature-text.js';
import { isTombstone, tombstone } from '../layers/tombstones.js';
import type { SpaceScope } from '../resolve/space-scope.js';
import type { PlannedWrite, WriteEntry } from './write-plan.js';

/** What one layer stores of a write. */
export interface LayerWrite {
  index: number;
  layer: StoredSpace;
  plan: WritePlan;
  /** What the write means to the layer, for the steps after its features (the activity log). */
  changes: FeatureChange[];
  /** Features the layer holds after the write less before it (a tombstone is no feature: deleting never adds one). */
  growth: number;
}

/**
 * The layers of a write (docs/decisions.md, "Virtual and composite spaces"):
 * - plain: the space is the one layer, read inside the transaction, and every feature goes to it.
 * - composite: every write goes to the space's own layer (the top one); the plan sees, for each id, the own
 *   layer's feature (read in the transaction) or else the one the layers below show; deleting a feature the
 *   layers below hold stores a tombstone.
 * - virtual: a feature goes to the last upstream holding it, a new one to the last upstream; a delete removes
 *   it from every upstream holding it. Upstreams in different databases cannot be written in one write.
 * The layer the write's first id goes to is the primary one: the storage transaction starts there and reads its
 * features inside it; the other layers are read just before it.
 */
export class LayerTargets {
  readonly ids: string[];
  readonly top: number;
  readonly primary: number;

  /** `before` holds the stored versions of the ids in each layer, read ahead; a plain space has none. */
  private constructor(readonly layers: readonly StoredSpace[], entries: readonly WriteEntry[], private readonly composite: boolean,
    private readonly before?: ReadonlyArray<ReadonlyMap<string, FeatureRow>>) {
    this.ids = before ? [...new Set(entries.map((entry) => entry.id))] : entries.map((entry) => entry.id);
    this.top = layers.length - 1;
    this.primary = this.targetOf(this.ids[0] ?? '');
  }

  /** The targets of a write through the scope's space; a layered space's other layers are read once the scope grants it. */
  static async of(scope: SpaceScope, entries: readonly WriteEntry[]): Promise<LayerTargets> {
    const { layering } = scope;
    if (layering.kind === 'plain') return new LayerTargets([scope.space], entries, false);
    const ids = [...new Set(entries.map((entry) => entry.id))];
    return new LayerTargets(scope.layers, entries, layering.kind === 'composite', await scope.versions(ids));
  }

  /** The layers holding an id as read ahead (a plain space's one layer holds whatever the plan deletes). */
  private holders(id: string): number[] {
    const { before } = this;
    if (!before) return [this.top];
    return this.layers.map((_, index) => index).filter((index) => before[index].has(id));
  }

  /** Where a feature is written: the one layer, the composite's own, or the upstream whose version the virtual space shows. */
  targetOf(id: string): number {
    return this.composite || !this.before ? this.top : this.holders(id).at(-1) ?? this.top;
  }

  /** The space a written feature's namespace names. */
  readonly spaceOf = (id: string): string => this.layers[this.targetOf(id)].id;

  /** The layers the write may change, known before it is planned: their activity logs and quotas are looked up ahead. */
  reachable(): number[] {
    if (!this.before) return [this.top];
    return [...new Set(this.ids.flatMap((id) => [this.targetOf(id), ...this.holders(id)]))];
  }

  /** An id's stored text in a layer: the primary layer's as read in the transaction (`fresh`), another's as read ahead. */
  private storedIn(index: number, id: string, fresh: ReadonlyMap<string, string>): string | undefined {
    return index === this.primary ? fresh.get(id) : this.before?.[index].get(id)?.json;
  }

  /** What the layers below the composite's own show for an id. */
  private below(id: string): string | undefined {
    for (let index = this.top - 1; index >= 0; index--) {
      const json = this.before?.[index].get(id)?.json;
      if (json !== undefined) return isTombstone(json) ? undefined : json;
    }
    return undefined;
  }

  /** What the plan sees for each id: what the space shows of it, from the layer it would be written to. */
  existing(fresh: ReadonlyMap<string, string>): ReadonlyMap<string, string> {
    if (!this.before) return fresh;
    const existing = new Map<string, string>();
    for (const id of this.ids) {
      const own = this.storedIn(this.targetOf(id), id, fresh);
      if (own !== undefined && !isTombstone(own)) existing.set(id, own);
      else if (this.composite && own === undefined) {
        const shown = this.below(id);
        if (shown !== undefined) existing.set(id, shown);
      }
    }
    return existing;
  }

  /** The plan as each layer it changes stores it, in the order of the plan. */
  split(planned: PlannedWrite, fresh: ReadonlyMap<string, string>): LayerWrite[] {
    const { plan, changes } = planned;
    if (!this.before) {
      if (plan.upserts.length === 0 && plan.deletes.length === 0) return [];
      return [{ index: this.top, layer: this.layers[this.top], plan, changes, growth: planned.result.inserted.length - plan.deletes.length }];
    }
    const writes = new Map<number, LayerWrite>();
    const writeOf = (index: number): LayerWrite => {
      let write = writes.get(index);
      if (!write) {
        write = { index, layer: this.layers[index], plan: { upserts: [], deletes: [], timestamp: plan.timestamp }, changes: [], growth: 0 };
        writes.set(index, write);
      }
      return write;
    };
    const store = (index: number, feature: FeatureWrite, grows: boolean) => {
      const write = writeOf(index);
      write.plan.upserts.push(feature);
      if (grows && this.storedIn(index, feature.id, fresh) === undefined) write.growth++;
    };
    for (const feature of plan.upserts) store(this.targetOf(feature.id), feature, true);
    for (const id of plan.deletes) {
      if (this.composite) {
        if (this.below(id) !== undefined) store(this.top, tombstone(id, this.layers[this.top].id, plan.timestamp), false);
        else {
          const write = writeOf(this.top);
          write.plan.deletes.push(id);
          write.growth--;
        }
        continue;
      }
      for (const index of this.holders(id)) {
        const write = writeOf(index);
        write.plan.deletes.push(id);
        write.growth--;
      }
    }
    if (this.composite) {
      // A composite's own layer records what the write means: a delete, not the tombstone that implements it.
      if (changes.length > 0) writeOf(this.top).changes.push(...changes);
    } else {
      for (const change of changes) {
        if (change.operation !== 'delete') writeOf(this.targetOf(change.id)).changes.push(change);
        else for (const index of this.holders(change.id)) writeOf(index).changes.push(...this.deletedFrom(index, change, fresh));
      }
    }
    return [...writes.values()];
  }

  /** A virtual space's delete as one of the upstreams holding the id logs it: from that upstream's own state, if it still has one. */
  private deletedFrom(index: number, change: FeatureChange, fresh: ReadonlyMap<string, string>): FeatureChange[] {
    if (index === this.targetOf(change.id)) return [change];
    const json = this.storedIn(index, change.id, fresh);
    return json === undefined ? [] : [{ id: change.id, operation: 'delete', before: parseStoredFeature(json) }];
  }
}
