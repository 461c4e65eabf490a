// What a valid access token grants: the claims of API.md 8.1 and the rights matrix lookups the hub needs.
import { ownMember } from '../../core/json.js';

export type AttributeMap = Record<string, unknown>;
/** action → the attribute maps it is granted for, per service (only `xyz-hub` matters for /hub). */
export type RightsMatrix = Record<string, Record<string, AttributeMap[]>>;

export interface Claims {
  tid: string;
  aid: string;
  cid: string;
  urm: RightsMatrix;
  /** −1 or absent: unlimited (API.md 8.1); `maxRequestsPerMinute` is ours (request-rate.ts). */
  limits?: { maxSpaces?: number; maxFeaturesPerSpace?: number; maxRequestsPerMinute?: number };
  /** When the token expires, in Unix seconds (API.md 8.1); absent: never. */
  exp?: number;
  /**
   * How many token deletions this process had heard when the token was last confirmed for this request
   * (AccessService): while the count has not moved, a long read need not look the token up again. Absent: look it up.
   */
  revocationsHeard?: number;
}

export const HUB_SERVICE = 'xyz-hub';

export const HUB_ACTIONS = ['readFeatures', 'createFeatures', 'updateFeatures', 'deleteFeatures', 'manageSpaces',
  'adminSpaces', 'managePackages', 'accessConnectors', 'manageConnectors', 'useCapabilities', 'useAdminCapabilities'] as const;

function valueMatches(granted: unknown, actual: unknown): boolean {
  if (Array.isArray(granted)) return granted.every((one) => valueMatches(one, actual));
  if (Array.isArray(actual)) return actual.some((one) => valueMatches(granted, one));
  if (typeof granted === 'string' && granted.endsWith('*') && typeof actual === 'string') {
    return actual.startsWith(granted.slice(0, -1));
  }
  return granted === actual;
}

/** API.md 8.2: every key of the token's map must match the resource (its own members: a key `constructor` is no attribute of every resource); `{}` matches everything. */
export function attributesMatch(granted: AttributeMap, resource: Record<string, unknown>): boolean {
  return Object.entries(granted).every(([key, value]) => valueMatches(value, ownMember(resource, key)));
}

export function hasRight(claims: Claims, action: string, resource: Record<string, unknown>): boolean {
  const maps = claims.urm[HUB_SERVICE]?.[action] ?? [];
  return maps.some((map) => attributesMatch(map, resource));
}

/** The rights matrix of the first-start admin token: every action on everything. */
export function allRights(): RightsMatrix {
  return { [HUB_SERVICE]: Object.fromEntries(HUB_ACTIONS.map((action) => [action, [{}]])) };
}

/**
 * The resources the maps granting any of `actions` match, where that is a simple rule: `'all'` when one map
 * is `{}`, the owner ids when every map is `{"owner": "<id>"}` (no wildcard), undefined otherwise.
 */
export function grantedOwners(claims: Claims, actions: readonly string[]): 'all' | string[] | undefined {
  const maps = actions.flatMap((action) => claims.urm[HUB_SERVICE]?.[action] ?? []);
  if (maps.some((map) => Object.keys(map).length === 0)) return 'all';
  const owners: string[] = [];
  for (const map of maps) {
    const keys = Object.keys(map);
    if (keys.length !== 1 || keys[0] !== 'owner' || typeof map.owner !== 'string' || map.owner.endsWith('*')) return undefined;
    owners.push(map.owner);
  }
  return owners;
}
