// The rights checks of API.md 8.3: the actions a request needs on a resource, and the 403 when the token lacks one.
import { hubError } from '../../core/errors.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import { logSourceOf } from '../activity-log/log-spaces.js';
import { type Claims, hasRight, HUB_SERVICE } from './claims.js';

/** One action a request needs, on the resource it touches. */
export interface Need {
  action: string;
  resource: Record<string, unknown>;
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

/** The rights texts in a 403 stay short: a token may carry thousands of maps. */
const MAX_RIGHTS_TEXT = 300;

function shortJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text.length > MAX_RIGHTS_TEXT ? `${text.slice(0, MAX_RIGHTS_TEXT)}…` : text;
}

/** Throws 403 for the first need the token does not grant; says what the token has and what was needed. */
export function authorize(claims: Claims, needs: readonly Need[]): void {
  for (const need of needs) {
    if (hasRight(claims, need.action, need.resource)) continue;
    const granted = claims.urm[HUB_SERVICE]?.[need.action] ?? [];
    throw hubError('insufficientRights', {
      granted: shortJson({ [need.action]: granted }),
      requested: shortJson({ [need.action]: [need.resource] }),
    });
  }
}

/** Feature reads need `readFeatures` on the space, except on shared spaces, which every valid token reads (API.md 8.3). */
export function authorizeRead(claims: Claims, id: string, definition: SpaceDefinition): void {
  if (definition.shared === true) return;
  authorize(claims, [{ action: 'readFeatures', resource: spaceResource(id, definition) }]);
}

/** The feature actions a write plan needs (API.md 8.3): every one that applies, not only the first. */
export interface WriteActions {
  inserts: boolean;
  updates: boolean;
  deletes: boolean;
  /** Existing features answered unchanged because the request said to retain them (`e=retain`). */
  retained: boolean;
}

export function authorizeWrite(claims: Claims, id: string, definition: SpaceDefinition, actions: WriteActions): void {
  const resource = spaceResource(id, definition);
  const needs: Need[] = [];
  if (actions.inserts) needs.push({ action: 'createFeatures', resource });
  if (actions.updates) needs.push({ action: 'updateFeatures', resource });
  if (actions.deletes) needs.push({ action: 'deleteFeatures', resource });
  if (actions.retained && definition.shared !== true) needs.push({ action: 'readFeatures', resource });
  authorize(claims, needs);
}
