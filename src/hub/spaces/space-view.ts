// How a space is shown to a caller: omitted empty members, real booleans, and members only some callers see (API.md 3.1).
import type { StoredSpace } from '../../storage/storage.js';

/** Returned only to callers allowed to see connectors (accessConnectors or adminSpaces). */
const CONNECTOR_MEMBERS = new Set(['storage', 'listeners', 'processors']);
/** Returned only to adminSpaces holders. */
const INTERNAL_MEMBERS = new Set(['cacheTTL']);

const MEMBER_ORDER = ['id', 'title', 'description', 'owner', 'cid', 'shared', 'readOnly', 'copyright', 'license', 'client',
  'packages', 'tags', 'storage', 'listeners', 'processors', 'searchableProperties', 'sortableProperties', 'extends', 'activityLogOf',
  'enableUUID', 'enableHistory', 'enableGlobalVersioning', 'maxVersionCount', 'versionsToKeep', 'cacheTTL'];

export interface SpaceVisibility {
  connectors: boolean;
  internal: boolean;
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  return typeof value === 'object' && Object.keys(value).length === 0;
}

export function spaceView(space: StoredSpace, visibility: SpaceVisibility): Record<string, unknown> {
  const view: Record<string, unknown> = { id: space.id };
  for (const member of MEMBER_ORDER) {
    const value = space.definition[member];
    if (member === 'id' || isEmpty(value)) continue;
    if (CONNECTOR_MEMBERS.has(member) && !visibility.connectors) continue;
    if (INTERNAL_MEMBERS.has(member) && !visibility.internal) continue;
    view[member] = value;
  }
  view.createdAt = space.definition.createdAt;
  view.updatedAt = space.definition.updatedAt;
  view.contentUpdatedAt = space.contentUpdatedAt;
  return view;
}
