// Resolves a space to what its reads see: its own features, or the layers of a virtual or composite space, once the caller may read them all.
import { hubError } from '../../core/errors.js';
import { logListenerOf } from '../activity-log/log-listener.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { authorizeRead } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';
import { type FeatureSource, PlainSource } from './feature-source.js';
import { LayeredSource } from './layered-source.js';
import { baseOf, isLayered, MAX_EXTENDS_DEPTH, virtualSpecOf } from './space-layout.js';

/** The spaces below a space and the space itself, in reading order, plus how they combine. */
export type Layering =
  | { kind: 'plain' }
  | { kind: 'virtual'; combination: 'group' | 'merge' | 'override'; layers: StoredSpace[] }
  | { kind: 'composite'; layers: StoredSpace[] };

/** Layered spaces whose layers are remembered; past it the memory starts over (it is only a hint). */
const REMEMBERED_LAYERINGS = 1000;

export class SpaceSources {
  /**
   * The ids of the spaces below each layered space, as last resolved: the next read looks them up together with
   * the space itself, which on PostgreSQL is one statement instead of two in a row. A stale entry costs one more
   * lookup, never a wrong answer: what the space's definition names is what is read.
   */
  private readonly below = new Map<string, string[]>();

  constructor(private readonly storage: Storage) {}

  /** A space another one reads from: it must exist and hold its own features (no virtual or composite of those). */
  private async layer(space: StoredSpace, id: string, plainOnly: boolean, known?: ReadonlyMap<string, StoredSpace | undefined>): Promise<StoredSpace> {
    const layer = known?.has(id) ? known.get(id) : await this.storage.spaces.get(id);
    if (!layer) throw hubError('layerUnavailable', { space: space.id, id, problem: 'does not exist (any more)' });
    if (virtualSpecOf(layer.definition)) throw hubError('layerUnavailable', { space: space.id, id, problem: 'is a virtual space: virtual spaces cannot be read through another space' });
    if (plainOnly && baseOf(layer.definition) !== undefined) throw hubError('layerUnavailable', { space: space.id, id, problem: 'is a composite space: a virtual space reads plain spaces only' });
    return layer;
  }

  /** How the space's reads and writes are laid out; a layering broken by later changes to its spaces is a clear 409. */
  async layering(space: StoredSpace, known?: ReadonlyMap<string, StoredSpace | undefined>): Promise<Layering> {
    const virtual = virtualSpecOf(space.definition);
    if (virtual) {
      if (virtual.operation === 'custom') throw hubError('customVirtualSpace', { id: space.id });
      const layers = await Promise.all(virtual.upstreams.map((id) => this.layer(space, id, true, known)));
      return { kind: 'virtual', combination: virtual.operation, layers };
    }
    const below: StoredSpace[] = [];
    for (let current = space, base = baseOf(space.definition); base !== undefined; base = baseOf(current.definition)) {
      if (below.length === MAX_EXTENDS_DEPTH || base === space.id || below.some((layer) => layer.id === base)) {
        throw hubError('layerUnavailable', { space: space.id, id: base, problem: `would make the space extend more than ${MAX_EXTENDS_DEPTH} levels` });
      }
      current = await this.layer(space, base, false, known);
      below.unshift(current);
    }
    return below.length === 0 ? { kind: 'plain' } : { kind: 'composite', layers: [...below, space] };
  }

  /**
   * Checks a definition about to be stored under `id`: the upstreams of a virtual space exist and are plain
   * spaces, the base of a composite space exists and is no virtual space, and no space extends more than
   * MAX_EXTENDS_DEPTH levels or itself. Breaking a layering later (deleting or changing a space below) is
   * allowed; reads through it then answer 409.
   */
  async check(id: string, definition: SpaceDefinition): Promise<void> {
    const virtual = virtualSpecOf(definition);
    const base = baseOf(definition);
    const refuse = (problem: string): never => { throw hubError('spaceValidation', { problem }); };
    // Ids come from the client: a long one is shortened in the message.
    const named = (space: string) => (space.length > 100 ? `${space.slice(0, 100)}…` : space);
    if (virtual && base !== undefined) refuse('A virtual space cannot extend another space.');
    // Its writes change the upstreams, whose own activity logs record them: a log of its own would stay empty.
    if (virtual && logListenerOf(definition)) refuse('A virtual space cannot have an activity log; give its upstream spaces one.');
    for (const upstream of virtual?.upstreams ?? []) {
      if (upstream === id) refuse(`The virtual space ${named(id)} cannot read from itself.`);
      const layer = await this.storage.spaces.get(upstream);
      if (!layer) refuse(`The upstream space ${named(upstream)} of the virtual space does not exist.`);
      else if (isLayered(layer.definition)) refuse(`The upstream space ${named(upstream)} is a virtual or composite space; a virtual space reads plain spaces only.`);
    }
    if (base === undefined) return;
    const chain = [id];
    for (let next: string | undefined = base; next !== undefined;) {
      if (chain.includes(next)) refuse(`The space ${named(id)} would extend itself through ${named(next)}.`);
      if (chain.length > MAX_EXTENDS_DEPTH) refuse(`The space ${named(id)} would extend more than ${MAX_EXTENDS_DEPTH} levels; at most ${MAX_EXTENDS_DEPTH} are allowed.`);
      const layer = await this.storage.spaces.get(next);
      if (!layer) return refuse(`The space ${named(next)} to extend does not exist.`);
      if (virtualSpecOf(layer.definition)) refuse(`The space ${named(next)} is a virtual space, which cannot be extended.`);
      chain.push(next);
      next = baseOf(layer.definition);
    }
  }

  /**
   * What a feature read of the space `id` sees, once the caller may read it: reading a layered space reads every
   * space below it, so the caller needs readFeatures on each (or each shared). 404 when the space is unknown.
   */
  async open(caller: Claims, id: string): Promise<FeatureSource> {
    const hinted = this.below.get(id) ?? [];
    const [space, ...layers] = await Promise.all([id, ...hinted].map((spaceId) => this.storage.spaces.get(spaceId)));
    if (!space) throw hubError('spaceOfFeaturesNotFound');
    return this.readable(caller, space, new Map(hinted.map((layerId, index) => [layerId, layers[index]])));
  }

  /** As `open`, for a space already looked up; `known` holds spaces looked up with it. */
  async readable(caller: Claims, space: StoredSpace, known?: ReadonlyMap<string, StoredSpace | undefined>): Promise<FeatureSource> {
    authorizeRead(caller, space.id, space.definition);
    const layering = await this.layering(space, known);
    if (layering.kind === 'plain') {
      this.below.delete(space.id);
      return new PlainSource(this.storage, space);
    }
    if (this.below.size >= REMEMBERED_LAYERINGS) this.below.clear();
    this.below.set(space.id, layering.layers.filter((layer) => layer.id !== space.id).map((layer) => layer.id));
    for (const layer of layering.layers) authorizeRead(caller, layer.id, layer.definition);
    return layering.kind === 'virtual'
      ? new LayeredSource(this.storage, space, layering.layers, layering.combination, false)
      : new LayeredSource(this.storage, space, layering.layers, 'override', true);
  }
}
