// Space management: create, read, list, patch and delete (API.md 3).
import { FORBIDDEN_ID_CHARACTERS, idRule, MAX_ID_LENGTH } from '../../core/id-limits.js';
import { isObject } from '../../core/json.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { AccessRecord, decide, decideListing, decideSee, definitionAccess, grantedActions, mayRead, maySee, visibleOwners } from '../access/authorization.js';
import { LOG_SPACE_SUFFIX, setsLogListener, withLogSpace } from '../activity-log/log-listener.js';
import { LogSpaces, refuseLogSpaceChange } from '../activity-log/log-spaces.js';
import type { Claims } from '../access/claims.js';
import { hubError } from '../../core/errors.js';
import type { SpaceListFilter, TimeCondition } from '../../core/space-query.js';
import { newSpaceId } from '../ids.js';
import { applyPatch, deepEqual } from '../merge-patch.js';
import { CONNECTOR_MEMBERS, CREATION_ONLY, emptyTitle, normalizeSpaceInput } from './space-fields.js';
import { creationNeeds, updateNeeds } from './space-rights.js';
import { spaceView } from './space-view.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { Pruning } from '../versions/pruning.js';

export type OwnerFilter = 'me' | 'others' | '*' | { owner: string };

export interface SpaceListQuery {
  owner: OwnerFilter;
  contentUpdatedAt?: TimeCondition;
  /** Each space gains `rights`: the actions of ACCESS_ACTIONS the token grants on it (API.md 3.6). */
  includeRights?: boolean;
  /** Storage, listeners and processors are listed only when asked for, and only to whom may see them. */
  includeConnectors?: boolean;
  /** Only the spaces whose features the caller may read (OGC collections): shared ones or with readFeatures. */
  readableOnly?: boolean;
}

/**
 * Connectors sent in the list form replace the stored map, as any array does (API.md 3.4); a map merges
 * per connector id. Returns the stored definition without the members that get replaced.
 */
function withoutReplacedConnectors(stored: SpaceDefinition, input: Record<string, unknown>): Record<string, unknown> {
  const base = { ...stored };
  for (const name of CONNECTOR_MEMBERS) {
    if (Array.isArray(input[name])) delete base[name];
  }
  return base;
}

/** Spaces read per storage query when listing (HUB_SPACE_PAGE_SIZE): bounds the memory of one list request. */
export const DEFAULT_SPACE_PAGE_SIZE = 1000;

export class SpaceService {
  private readonly logSpaces: LogSpaces;

  /** `layers` checks layered definitions; `listPageSize`: spaces read per storage query when listing, which bounds the memory of a list. */
  constructor(private readonly storage: Storage, private readonly layers: SpaceResolver, private readonly defaultStorageId: string,
    private readonly listPageSize = DEFAULT_SPACE_PAGE_SIZE, private readonly pruning?: Pruning) {
    this.logSpaces = new LogSpaces(storage, defaultStorageId);
  }

  view(claims: Claims, space: StoredSpace, listing?: SpaceListQuery): Record<string, unknown> {
    const access = definitionAccess(claims, space);
    const connectors = (listing === undefined || listing.includeConnectors === true) && access.connectors;
    const view = spaceView(space, { internal: access.internal, connectors });
    if (listing?.includeRights) view.rights = grantedActions(claims, space);
    return view;
  }

  /**
   * A virtual or composite space reads the spaces below it, and shows their features to whoever reads it: storing
   * one needs readFeatures on each (activity logs judged as the spaces they log), decided with the definition's own needs.
   */
  private async layerReads(claims: Claims, id: string, definition: SpaceDefinition, record: AccessRecord): Promise<AccessRecord> {
    // Each space below is decided as it is found, with the record so far (the same 403 as deciding it all at the end):
    // the checks of its definition that follow must not answer a caller who may not read it.
    const admit = (layer: StoredSpace) => decide(claims, new AccessRecord().add(record.needs).read(layer));
    for (const layer of await this.layers.check(id, definition, admit)) record.read(layer);
    return record;
  }

  /**
   * `limits.maxSpaces` of the token: the spaces its account owns are counted as the creation starts, so creations
   * at the same moment may together pass it by one each (docs/decisions.md, "Rights and quotas").
   */
  private async checkSpaceQuota(claims: Claims): Promise<void> {
    const limit = claims.limits?.maxSpaces;
    if (limit === undefined || limit < 0) return;
    let owned = 0;
    for await (const page of this.storage.spaces.list({ owner: { is: claims.aid } }, Math.min(this.listPageSize, limit + 1))) {
      owned += page.length;
      if (owned >= limit) throw hubError('spaceQuotaReached', { limit });
    }
  }

  async create(claims: Claims, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    const fields = normalizeSpaceInput(input);
    if (fields.title === undefined || fields.title === null) emptyTitle();
    const chosenId = input.id !== undefined && input.id !== null;
    const id = chosenId ? input.id : newSpaceId();
    if (typeof id !== 'string' || id === '' || id.length > MAX_ID_LENGTH || FORBIDDEN_ID_CHARACTERS.test(id)) {
      throw hubError('spaceValidation', { problem: idRule('id') });
    }
    const now = Date.now();
    const given: Record<string, unknown> = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null));
    for (const name of CONNECTOR_MEMBERS) {
      // A connector set to null means "remove it" to PATCH; on creation there is nothing to remove.
      const byId = given[name];
      if (isObject(byId)) given[name] = Object.fromEntries(Object.entries(byId).filter(([, configs]) => configs !== null));
    }
    const definition: SpaceDefinition = {
      ...given,
      title: fields.title as string,
      owner: (given.owner as string | undefined) ?? claims.aid,
      cid: (given.cid as string | undefined) ?? claims.cid,
      storage: given.storage ?? { id: this.defaultStorageId },
      versionsToKeep: (given.versionsToKeep as number | undefined) ?? 1,
      createdAt: now,
      updatedAt: now,
    };
    if (definition.enableHistory === true) definition.enableUUID = true;
    if (chosenId && id.endsWith(LOG_SPACE_SUFFIX)) throw hubError('spaceValidation', { problem: `Space ids ending in ${LOG_SPACE_SUFFIX} are kept for the activity logs of spaces.` });
    withLogSpace(id, definition);
    const needs = new AccessRecord().add(creationNeeds(claims, id, chosenId, definition, { id: this.defaultStorageId }));
    decide(claims, await this.layerReads(claims, id, definition, needs));
    await this.checkSpaceQuota(claims);
    if (setsLogListener(definition.listeners)) await this.logSpaces.checkFree(id);
    const created = await this.storage.spaces.create(id, definition, now);
    await this.logSpaces.created(created);
    return this.view(claims, created);
  }

  async get(claims: Claims, id: string): Promise<Record<string, unknown>> {
    const space = await this.storage.spaces.get(id);
    if (!space) throw hubError('spaceNotFound');
    decideSee(claims, space);
    return this.view(claims, space);
  }

  /**
   * The spaces the caller may see, a page at a time. Owner, contentUpdatedAt and, where the rights matrix
   * is simple (see grantedOwners), access are filtered by the storage; other rights are checked per space.
   */
  async *list(claims: Claims, query: SpaceListQuery): AsyncIterable<Record<string, unknown>[]> {
    decideListing(claims);
    const granted = visibleOwners(claims);
    const filter: SpaceListFilter = { contentUpdatedAt: query.contentUpdatedAt };
    if (query.owner === 'me') filter.owner = { is: claims.aid };
    else if (query.owner === 'others') filter.owner = { isNot: claims.aid };
    else if (typeof query.owner === 'object') filter.owner = { is: query.owner.owner };
    if (Array.isArray(granted)) filter.sharedOrOwnedBy = granted;
    for await (const page of this.storage.spaces.list(filter, this.listPageSize)) {
      const accessible = granted === undefined ? page.filter((space) => maySee(claims, space)) : page;
      const visible = query.readableOnly ? accessible.filter((space) => mayRead(claims, space)) : accessible;
      if (visible.length > 0) yield visible.map((space) => this.view(claims, space, query));
    }
  }

  /** Merge semantics (API.md 3.4): members replace, objects merge, `null` removes; owner and cid stay. */
  async patch(claims: Claims, id: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (input.id !== undefined && input.id !== id) throw hubError('spaceIdMismatch');
    const fields = normalizeSpaceInput(input);
    let layerReads: AccessRecord | undefined;
    if (fields.storage !== undefined) {
      // Checked against the spaces below as they are now: a space changed later breaks reads with a clear 409, nothing worse.
      const current = await this.storage.spaces.get(id);
      if (!current) throw hubError('spaceNotFound');
      // The checks of the new layering read the stored definition: only a caller who may change it gets their refusals.
      decide(claims, new AccessRecord().onSpace('manageSpaces', current));
      layerReads = await this.layerReads(claims, id, applyPatch(withoutReplacedConnectors(current.definition, input), fields).result as SpaceDefinition, new AccessRecord());
    }
    if (setsLogListener(fields.listeners)) await this.logSpaces.checkFree(id);
    let before: SpaceDefinition | undefined;
    const updated = await this.storage.spaces.update(id, (current) => {
      before = current.definition;
      // First, as the refusals below compare the input with the stored definition (guessing its base would answer 400 or 403).
      decide(claims, new AccessRecord().onSpace('manageSpaces', current));
      for (const name of CREATION_ONLY) {
        if (name in fields && !(fields[name] === true && current.definition[name] === true)) {
          throw hubError('creationOnlyProperty', { name });
        }
      }
      // A composite's own layer holds tombstones of its base's features: another base (or none) would expose them.
      if ('extends' in fields && !deepEqual(fields.extends, current.definition.extends)) throw hubError('creationOnlyProperty', { name: 'extends' });
      if (fields.owner === null) delete fields.owner;
      if (fields.cid === null) delete fields.cid;
      if (fields.title === null) emptyTitle();
      // The title cannot be removed (checked above) and createdAt is not a client member, so the merge is a definition.
      const result = applyPatch(withoutReplacedConnectors(current.definition, input), fields).result as SpaceDefinition;
      withLogSpace(id, result);
      // Checked on the stored definition inside the update, so the rights judged are those of what changes.
      decide(claims, new AccessRecord().add(updateNeeds(id, current.definition, result)).add(layerReads?.needs ?? []));
      refuseLogSpaceChange(id, current.definition);
      if (deepEqual(result, current.definition)) return current.definition;
      return { ...result, updatedAt: Date.now() };
    });
    if (!updated) throw hubError('spaceNotFound');
    if (before) await this.logSpaces.changed(before, updated);
    // Fewer versions kept are unreadable at once (oldestReadable reads the definition); their rows go in the background.
    if ('versionsToKeep' in fields) this.pruning?.schedule(id);
    return this.view(claims, updated);
  }

  async delete(claims: Claims, id: string): Promise<Record<string, unknown>> {
    const space = await this.storage.spaces.get(id);
    if (!space) throw hubError('spaceNotFound');
    decide(claims, new AccessRecord().onSpace('manageSpaces', space));
    await this.logSpaces.checkDeletable(space);
    const deleted = await this.storage.spaces.delete(id);
    if (!deleted) throw hubError('spaceNotFound');
    await this.logSpaces.deleted(deleted);
    return this.view(claims, deleted);
  }
}
