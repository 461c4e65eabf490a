// What creating or changing a space needs of the token (API.md 3.2, 8.2, 8.3): one Need per action and resource.
import { ownMember } from '../../core/json.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import { mayChooseId, type Need, spaceResource } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';
import { deepEqual } from '../merge-patch.js';
import { CONNECTOR_MEMBERS } from './space-fields.js';

/** "Basic" space properties (API.md 8.2): changing them needs manageSpaces; any other member but `packages` is an admin edit. */
const BASIC = new Set(['id', 'title', 'description', 'client', 'copyright', 'license', 'shared', 'enableUUID', 'enableHistory',
  'maxVersionCount', 'cacheTTL', 'readOnly', 'extends', 'versionsToKeep', 'storage', 'listeners', 'processors',
  'searchableProperties', 'sortableProperties']);
/** Kept by the hub, never set by a client. */
const HUB_MEMBERS = new Set(['createdAt', 'updatedAt']);
const SEARCH_CONFIGURATION = ['searchableProperties', 'sortableProperties'];

/** The members whose value differs between two definitions (absent on one side counts as a difference). */
function changedMembers(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const names = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...names].filter((name) => !HUB_MEMBERS.has(name) && !deepEqual(before[name], after[name]));
}

/** The connector ids a definition uses: its storage and every listener and processor. */
function connectorIds(definition: Record<string, unknown>, member: 'storage' | 'listeners' | 'processors'): string[] {
  const value = definition[member];
  if (member === 'storage') return typeof (value as { id?: unknown } | undefined)?.id === 'string' ? [(value as { id: string }).id] : [];
  return value && typeof value === 'object' ? Object.keys(value) : [];
}

/** Connector ids added, removed or configured differently between two definitions. */
function changedConnectors(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const ids = new Set<string>();
  if (!deepEqual(before.storage, after.storage)) for (const id of connectorIds(after, 'storage')) ids.add(id);
  for (const member of CONNECTOR_MEMBERS) {
    const old = (before[member] ?? {}) as Record<string, unknown>;
    const now = (after[member] ?? {}) as Record<string, unknown>;
    for (const id of new Set([...Object.keys(old), ...Object.keys(now)])) if (!deepEqual(ownMember(old, id), ownMember(now, id))) ids.add(id);
  }
  return [...ids];
}

/** Packages added or removed. */
function changedPackages(before: Record<string, unknown>, after: Record<string, unknown>): string[] {
  const old = new Set((before.packages ?? []) as string[]);
  const now = new Set((after.packages ?? []) as string[]);
  return [...new Set([...old, ...now])].filter((name) => old.has(name) !== now.has(name));
}

/**
 * The needs of a definition change from `before` to `after` of space `id`, as API.md 8.3 says for POST and PATCH:
 * manageSpaces on `subject` (the space as created, or as it is before a PATCH), adminSpaces for admin members
 * (for the new owner too when the owner changes), accessConnectors per connector, managePackages per package,
 * useCapabilities for the search configuration.
 */
function changeNeeds(id: string, subject: Record<string, unknown>, before: Record<string, unknown>, after: SpaceDefinition): Need[] {
  const resource = spaceResource(id, after);
  const changed = changedMembers(before, after);
  const needs: Need[] = [{ action: 'manageSpaces', resource: subject }];
  if (changed.some((name) => !BASIC.has(name) && name !== 'packages')) {
    needs.push({ action: 'adminSpaces', resource: subject });
    if (after.owner !== subject.owner) needs.push({ action: 'adminSpaces', resource });
  }
  for (const connector of changedConnectors(before, after)) needs.push({ action: 'accessConnectors', resource: { id: connector } });
  for (const name of changedPackages(before, after)) {
    needs.push({ action: 'managePackages', resource: { id: name, owner: after.owner } });
  }
  if (changed.some((name) => SEARCH_CONFIGURATION.includes(name))) {
    needs.push({ action: 'useCapabilities', resource: { id: 'searchablePropertiesConfiguration' } });
  }
  return needs;
}

/** A space chosen by id needs adminSpaces unless the token may choose ids (authorization.ts mayChooseId). */
function chosenIdNeeds(claims: Claims, id: string, definition: SpaceDefinition): Need[] {
  return mayChooseId(claims, id, definition) ? [] : [{ action: 'adminSpaces', resource: spaceResource(id, definition) }];
}

/**
 * The needs of creating space `id` with `definition`; `chosenId` when the client gave the id. What the hub
 * fills in itself (the caller as owner, its cid, the default storage) needs nothing beyond manageSpaces.
 */
export function creationNeeds(claims: Claims, id: string, chosenId: boolean, definition: SpaceDefinition, defaultStorage: unknown): Need[] {
  const defaults: Record<string, unknown> = { owner: claims.aid, cid: claims.cid, storage: defaultStorage, versionsToKeep: 1 };
  const needs = changeNeeds(id, spaceResource(id, definition), defaults, definition);
  return chosenId ? [...needs, ...chosenIdNeeds(claims, id, definition)] : needs;
}

/** The needs of changing space `id` from one stored definition to another. */
export function updateNeeds(id: string, before: SpaceDefinition, after: SpaceDefinition): Need[] {
  return changeNeeds(id, spaceResource(id, before), before, after);
}
