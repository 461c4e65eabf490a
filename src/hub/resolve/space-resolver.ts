// Resolves a space once per request: the space, the layers of a virtual or composite space, and (for one-feature reads) the feature, into a SpaceScope.
import { hubError } from '../../core/errors.js';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { maySee } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';
import { logListenerOf } from '../activity-log/log-listener.js';
import { baseOf, isLayered, type Layering, MAX_EXTENDS_DEPTH, virtualSpecOf } from '../layers/space-layout.js';
import { type OneFeature, PrefetchedFeature } from './one-feature.js';
import type { PrefetchedArea } from '../feature-source.js';
import { SpaceMemo } from './space-memo.js';
import { SpaceScope, type TokenCheck } from './space-scope.js';

/** Layered spaces whose layers are remembered; past it the memory starts over (it is only a hint). */
const REMEMBERED_LAYERINGS = 1000;

/** No space looked up beforehand: a plain space, the most frequent read, needs no map of its own. */
const NONE_KNOWN: ReadonlyMap<string, StoredSpace | undefined> = new Map();

export class SpaceResolver {
  /**
   * The ids of the spaces below each layered space, as last resolved: the next request looks them up together
   * with the space itself, which on PostgreSQL is one statement instead of two in a row. A stale entry costs one
   * more lookup, never a wrong answer: what the space's definition names is what is read.
   */
  private readonly below = new Map<string, string[]>();
  /** The rows of spaces read, reused while nothing committed (space-memo.ts). */
  private readonly memo: SpaceMemo;

  constructor(private readonly storage: Storage, private readonly tokens: TokenCheck) {
    this.memo = new SpaceMemo(storage);
  }

  /**
   * A space another one reads from: it must exist and hold its own features (no virtual or composite of those).
   * Returns whether its definition may be looked into further: only for a caller who may see it (`maySee`, as
   * `GET /spaces/{s}`); otherwise it is a layer as it is, and the read's decision refuses it before anything is read.
   */
  private async layer(caller: Claims, space: StoredSpace, id: string, plainOnly: boolean, known?: ReadonlyMap<string, StoredSpace | undefined>): Promise<{ layer: StoredSpace; seen: boolean }> {
    const layer = known?.has(id) ? known.get(id) : await this.memo.get(id);
    if (!layer) throw hubError('layerUnavailable', { space: space.id, id, problem: 'does not exist (any more)' });
    if (!maySee(caller, layer)) return { layer, seen: false };
    if (virtualSpecOf(layer.definition)) throw hubError('layerUnavailable', { space: space.id, id, problem: 'is a virtual space: virtual spaces cannot be read through another space' });
    if (plainOnly && baseOf(layer.definition) !== undefined) throw hubError('layerUnavailable', { space: space.id, id, problem: 'is a composite space: a virtual space reads plain spaces only' });
    return { layer, seen: true };
  }

  /**
   * How the space's reads and writes are laid out; a layering broken by later changes to its spaces is a clear 409.
   * The 409s and 501s name what a definition holds (its base, its upstreams, their kinds), so a definition is looked
   * into only for a caller who may see its space, as `GET /spaces/{s}` shows it. A space the caller may not see is
   * opened as its own layer alone: every decision of its scope needs some access action on it, so each refuses with
   * the 403 a plain space gets. Below a layer the caller may not see, nothing more is looked up: reading through it
   * needs readFeatures on it, which the decision refuses first.
   */
  private async layering(caller: Claims, space: StoredSpace, known?: ReadonlyMap<string, StoredSpace | undefined>): Promise<Layering> {
    if (!maySee(caller, space)) return { kind: 'plain' };
    const virtual = virtualSpecOf(space.definition);
    if (virtual) {
      if (virtual.operation === 'custom') throw hubError('customVirtualSpace', { id: space.id });
      const layers = await Promise.all(virtual.upstreams.map(async (id) => (await this.layer(caller, space, id, true, known)).layer));
      return { kind: 'virtual', combination: virtual.operation, layers };
    }
    const below: StoredSpace[] = [];
    for (let current = space, base = baseOf(space.definition); base !== undefined; base = baseOf(current.definition)) {
      if (below.length === MAX_EXTENDS_DEPTH || base === space.id || below.some((layer) => layer.id === base)) {
        throw hubError('layerUnavailable', { space: space.id, id: base, problem: `would make the space extend more than ${MAX_EXTENDS_DEPTH} levels` });
      }
      const { layer, seen } = await this.layer(caller, space, base, false, known);
      below.unshift(layer);
      if (!seen) break;
      current = layer;
    }
    return below.length === 0 ? { kind: 'plain' } : { kind: 'composite', layers: [...below, space] };
  }

  /** The space with its layers, remembering them for the next request. */
  private async scope(caller: Claims, space: StoredSpace, known: ReadonlyMap<string, StoredSpace | undefined>, prefetched?: PrefetchedArea): Promise<SpaceScope> {
    const layering = await this.layering(caller, space, known);
    if (layering.kind === 'plain') this.below.delete(space.id);
    else {
      if (this.below.size >= REMEMBERED_LAYERINGS) this.below.clear();
      this.below.set(space.id, layering.layers.filter((layer) => layer.id !== space.id).map((layer) => layer.id));
    }
    return new SpaceScope(this.storage, this.tokens, caller, space, layering, layering.kind === 'plain' ? prefetched : undefined);
  }

  /** The spaces remembered below `id`, looked up with it. */
  private async hinted(id: string): Promise<Map<string, StoredSpace | undefined>> {
    const ids = this.below.get(id) ?? [];
    const found = await Promise.all(ids.map((layerId) => this.memo.get(layerId)));
    return new Map(ids.map((layerId, index) => [layerId, found[index]]));
  }

  /** The space `id` as this request sees it; 404 (`notFound`) when it does not exist. Nothing is decided or read yet. */
  async open(caller: Claims, id: string, notFound: () => never = () => { throw hubError('spaceOfFeaturesNotFound'); }): Promise<SpaceScope> {
    const [space, known] = this.below.has(id) ? await Promise.all([this.memo.get(id), this.hinted(id)]) : [await this.memo.get(id), NONE_KNOWN];
    if (!space) return notFound();
    return this.scope(caller, space, known);
  }

  /**
   * As `open` for an area read at HEAD (`query`, unsampled, its texts read as stored): where the storage can, the space
   * and the read's first texts come from one statement, handed to the scope's reader of a plain space, which hands
   * them out once the read is granted and to this query only. A space known to be layered is opened as before.
   */
  async openWithArea(caller: Claims, id: string, query: FeatureQuery): Promise<SpaceScope> {
    const lookup = this.storage.spaces.getWithArea?.bind(this.storage.spaces);
    if (!lookup || this.below.has(id)) return this.open(caller, id);
    const found = await lookup(id, query);
    if (!found) throw hubError('spaceOfFeaturesNotFound');
    return this.scope(caller, found.space, NONE_KNOWN, found.first && { query, first: found.first });
  }

  /**
   * As `open` for a read of one feature: the space and the feature come from one lookup, so the most frequent
   * read of a plain space costs one database statement. The feature is handed out only once the read is granted.
   */
  async openWithFeature(caller: Claims, id: string, featureId: string, notFound: () => never = () => { throw hubError('spaceOfFeaturesNotFound'); }): Promise<OneFeature> {
    const found = await this.storage.spaces.getWithFeature(id, featureId);
    if (!found) return notFound();
    if (!isLayered(found.definition)) return new PrefetchedFeature(caller, { id, definition: found.definition }, found.feature);
    const scope = await this.open(caller, id, notFound);
    return { definition: scope.space.definition, read: () => scope.readOne(featureId) };
  }

  /**
   * Checks a definition about to be stored under `id`, and returns every space it would read: the upstreams of a
   * virtual space exist and are plain spaces, the base of a composite space exists and is no virtual space, and no
   * space extends more than MAX_EXTENDS_DEPTH levels or itself. Each space is handed to `admit` (which throws when
   * the caller may not read it) as soon as it is found, before anything of its definition is looked at: a refusal
   * naming its kind or its own base would tell a caller who may not read it what its private definition holds.
   * Breaking a layering later (deleting or changing a space below) is allowed; reads through it then answer 409.
   */
  async check(id: string, definition: SpaceDefinition, admit: (layer: StoredSpace) => void): Promise<StoredSpace[]> {
    const virtual = virtualSpecOf(definition);
    const base = baseOf(definition);
    const refuse = (problem: string): never => { throw hubError('spaceValidation', { problem }); };
    // Ids come from the client: a long one is shortened in the message.
    const named = (space: string) => (space.length > 100 ? `${space.slice(0, 100)}…` : space);
    if (virtual && base !== undefined) refuse('A virtual space cannot extend another space.');
    // Its writes change the upstreams, whose own activity logs record them: a log of its own would stay empty.
    if (virtual && logListenerOf(definition)) refuse('A virtual space cannot have an activity log; give its upstream spaces one.');
    const read: StoredSpace[] = [];
    for (const upstream of virtual?.upstreams ?? []) {
      if (upstream === id) refuse(`The virtual space ${named(id)} cannot read from itself.`);
      const layer = await this.storage.spaces.get(upstream);
      if (!layer) return refuse(`The upstream space ${named(upstream)} of the virtual space does not exist.`);
      admit(layer);
      if (isLayered(layer.definition)) refuse(`The upstream space ${named(upstream)} is a virtual or composite space; a virtual space reads plain spaces only.`);
      read.push(layer);
    }
    const chain = [id];
    for (let next: string | undefined = base; next !== undefined;) {
      if (chain.includes(next)) refuse(`The space ${named(id)} would extend itself through ${named(next)}.`);
      if (chain.length > MAX_EXTENDS_DEPTH) refuse(`The space ${named(id)} would extend more than ${MAX_EXTENDS_DEPTH} levels; at most ${MAX_EXTENDS_DEPTH} are allowed.`);
      const layer = await this.storage.spaces.get(next);
      if (!layer) return refuse(`The space ${named(next)} to extend does not exist.`);
      admit(layer);
      if (virtualSpecOf(layer.definition)) refuse(`The space ${named(next)} is a virtual space, which cannot be extended.`);
      read.push(layer);
      chain.push(next);
      next = baseOf(layer.definition);
    }
    return read;
  }
}
