// The one module that decides rights (API.md 8.2, 8.3): a request records what it does to each resource, and this module grants it all or answers 403.
import { hubError } from '../../core/errors.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import { logSourceOf } from '../activity-log/log-spaces.js';
import { attributesMatch, type Claims, grantedOwners, hasRight, HUB_SERVICE } from './claims.js';

/** One action a request needs, on the resource it touches. */
export interface Need {
  action: string;
  resource: Record<string, unknown>;
}

/** Any one of several actions on a resource. */
interface EitherNeed {
  actions: readonly string[];
  resource: Record<string, unknown>;
}

/** The feature actions: a token holding none of them on a space learns nothing of its features, not even which ids exist. */
const FEATURE_ACTIONS = ['readFeatures', 'createFeatures', 'updateFeatures', 'deleteFeatures'] as const;

/** A space as rights see it: its id and stored definition. */
export interface SpaceRef {
  id: string;
  definition: SpaceDefinition;
}

/**
 * The resource side of the space actions: its owner, id and packages (API.md 8.2). An activity log space is
 * judged as the space it logs (its definition copies that one's owner and packages).
 */
export function spaceResource(id: string, definition: SpaceDefinition): Record<string, unknown> {
  const resource: Record<string, unknown> = { owner: definition.owner, space: logSourceOf(definition) ?? id };
  if (definition.packages !== undefined) resource.packages = definition.packages;
  return resource;
}

/** The feature actions a write plan needs (API.md 8.3): every one that applies, not only the first. */
export interface WriteActions {
  inserts: boolean;
  updates: boolean;
  deletes: boolean;
  /**
   * The answer carries what was stored: a retained feature (`e=retain`), a patch or merge answered merged into
   * the stored feature, or a conflict naming the stored uuid. The caller reads it, so it needs readFeatures.
   */
  answersStored: boolean;
}

/** What a request does, resource by resource; `decide` grants all of it or nothing. */
export class AccessRecord {
  readonly needs: Array<Need | EitherNeed> = [];

  /** Reading a space's features: readFeatures, which every valid token has on shared spaces (API.md 8.3). */
  read(space: SpaceRef): this {
    if (space.definition.shared !== true) this.needs.push({ action: 'readFeatures', resource: spaceResource(space.id, space.definition) });
    return this;
  }

  /** Writing features of a space, as its write plan says. */
  write(space: SpaceRef, actions: WriteActions): this {
    const resource = spaceResource(space.id, space.definition);
    if (actions.inserts) this.needs.push({ action: 'createFeatures', resource });
    if (actions.updates) this.needs.push({ action: 'updateFeatures', resource });
    if (actions.deletes) this.needs.push({ action: 'deleteFeatures', resource });
    if (actions.answersStored) this.read(space);
    return this;
  }

  /**
   * About to write features of a space, before the plan looks at what is stored: some feature action on it, so
   * that a caller holding none cannot tell from the answer (404, 409, 403) which ids the space holds.
   */
  writer(space: SpaceRef): this {
    if (space.definition.shared !== true) this.needs.push({ actions: FEATURE_ACTIONS, resource: spaceResource(space.id, space.definition) });
    return this;
  }

  /** Any other action on a space (manageSpaces, deleteFeatures of a delete by filter). */
  onSpace(action: string, space: SpaceRef): this {
    this.needs.push({ action, resource: spaceResource(space.id, space.definition) });
    return this;
  }

  /** An optional feature of the hub (API.md 8.2 useCapabilities). */
  capability(id: string): this {
    this.needs.push({ action: 'useCapabilities', resource: { id } });
    return this;
  }

  /** Needs built elsewhere (space-rights.ts for definition changes), or another record's. */
  add(needs: ReadonlyArray<Need | EitherNeed>): this {
    this.needs.push(...needs);
    return this;
  }
}

/**
 * A space's webhook subscriptions (docs/subscriptions.md): manageSpaces to list or delete them (their destinations are
 * the owner's business), and readFeatures too where they send the space's features elsewhere: to create or change one,
 * and for its delivery to go on, in the name of the token that created or last changed it.
 */
export function subscriptionAccess(space: SpaceRef, sends: boolean): AccessRecord {
  const record = new AccessRecord().onSpace('manageSpaces', space);
  return sends ? record.read(space) : record;
}

/** Whether the token grants every need of the record: `decide` without the 403, for work done later in its name. */
export function allows(claims: Claims, record: AccessRecord): boolean {
  return record.needs.every((need) => ('action' in need ? [need.action] : need.actions).some((action) => hasRight(claims, action, need.resource)));
}

/** The rights texts in a 403 stay short: a token may carry thousands of maps. */
const MAX_RIGHTS_TEXT = 300;

function shortJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > MAX_RIGHTS_TEXT ? `${text.slice(0, MAX_RIGHTS_TEXT)}…` : text;
}

/** Throws 403 for the first need the token does not grant; says what the token has and what was needed. */
export function decide(claims: Claims, record: AccessRecord): void {
  for (const need of record.needs) {
    const actions = 'action' in need ? [need.action] : need.actions;
    if (actions.some((action) => hasRight(claims, action, need.resource))) continue;
    const urm = claims.urm[HUB_SERVICE] ?? {};
    throw hubError('insufficientRights', {
      granted: shortJson(Object.fromEntries(actions.map((action) => [action, urm[action] ?? []]))),
      requested: shortJson(Object.fromEntries(actions.map((action) => [action, [need.resource]]))),
    });
  }
}

/** The actions that give access to a space (API.md 3.6), in the order a space listing shows them. */
export const ACCESS_ACTIONS = ['readFeatures', 'createFeatures', 'updateFeatures', 'deleteFeatures', 'manageSpaces', 'adminSpaces'] as const;

/** The actions of ACCESS_ACTIONS the token grants on a space. */
export function grantedActions(claims: Claims, space: SpaceRef): string[] {
  const resource = spaceResource(space.id, space.definition);
  return ACCESS_ACTIONS.filter((action) => hasRight(claims, action, resource));
}

/** What the caller sees of a space's definition: internal members with adminSpaces, connectors with accessConnectors too. */
export function definitionAccess(claims: Claims, space: SpaceRef): { internal: boolean; connectors: boolean } {
  const resource = spaceResource(space.id, space.definition);
  const internal = hasRight(claims, 'adminSpaces', resource);
  return { internal, connectors: internal || hasRight(claims, 'accessConnectors', resource) };
}

/** Whether the caller sees the space at all: shared, or any access action on it (API.md 8.3 `GET /spaces/{s}`). */
export function maySee(claims: Claims, space: SpaceRef): boolean {
  return space.definition.shared === true || grantedActions(claims, space).length > 0;
}

/** Whether the caller reads the space's features, as a filter rather than a 403 (OGC collections). */
export function mayRead(claims: Claims, space: SpaceRef): boolean {
  return space.definition.shared === true || hasRight(claims, 'readFeatures', spaceResource(space.id, space.definition));
}

/** `GET /spaces/{s}`: a space the caller cannot see is answered as if it read its features, a 403 saying what is missing. */
export function decideSee(claims: Claims, space: SpaceRef): void {
  if (!maySee(claims, space)) decide(claims, new AccessRecord().read(space));
}

/**
 * Whether the token may choose the id of a space it creates: a manageSpaces map that is `{}` or names the space
 * (a `space` attribute, e.g. `"proj-*"`); maps holding only an owner do not let a token choose ids (API.md 3.2).
 */
export function mayChooseId(claims: Claims, id: string, definition: SpaceDefinition): boolean {
  const resource = spaceResource(id, definition);
  const maps = claims.urm[HUB_SERVICE]?.manageSpaces ?? [];
  return maps.some((map) => (Object.keys(map).length === 0 || 'space' in map) && attributesMatch(map, resource));
}

/** Listing spaces needs some right on spaces at all (API.md 8.3). */
export function decideListing(claims: Claims): void {
  const actions = Object.values(claims.urm[HUB_SERVICE] ?? {});
  if (!actions.some((maps) => Array.isArray(maps) && maps.length > 0)) throw hubError('noHubRights');
}

/** The owners whose spaces the caller may see, for the storage to filter by (see claims.ts grantedOwners). */
export function visibleOwners(claims: Claims): 'all' | string[] | undefined {
  return grantedOwners(claims, ACCESS_ACTIONS);
}
