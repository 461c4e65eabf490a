// The rights steps of the write pipeline: the request's scope records what the write does, and authorization.ts decides.
import type { WriteActions } from '../access/authorization.js';
import type { SpaceScope } from '../resolve/space-scope.js';
import type { LayerWrite } from './layer-targets.js';

/**
 * Before the plan looks at anything stored, the caller must hold some feature right on the space, so that a caller
 * holding none cannot tell from the answer (404, 409, 403) which ids exist. Reading a layered space's other layers
 * is decided when LayerTargets reads them (the plan sees their features).
 */
export function decideWriter(scope: SpaceScope): void {
  scope.decideWriter();
}

/**
 * Inside the storage transaction, on the plan: only then is it known what the write inserts, updates, deletes or
 * answers, on the space and on each layer it changes; a refusal aborts the transaction, so nothing is written.
 */
export function decidePlan(scope: SpaceScope, actions: WriteActions, writes: readonly LayerWrite[]): void {
  scope.decideWrite(actions, writes.map((write) => write.layer));
}
