// The read-only steps of the write pipeline: a read-only space, or a read-only layer a write through another space would change, refuses it.
import { hubError } from '../../core/errors.js';
import type { StoredSpace } from '../../storage/storage.js';
import type { LayerWrite } from './layer-targets.js';

/** The space written to, once the caller holds some feature right on it (SpaceScope.writable), before anything else about the write (an activity log space is read-only). */
export function refuseReadOnlySpace(space: StoredSpace): void {
  if (space.definition.readOnly === true) throw hubError('readOnlySpace', { id: space.id });
}

/** The layers the plan changes, once it is known which: only those need to be writable. */
export function refuseReadOnlyLayers(space: StoredSpace, writes: readonly LayerWrite[]): void {
  for (const { layer } of writes) {
    if (layer.id !== space.id && layer.definition.readOnly === true) throw hubError('readOnlySpace', { id: layer.id });
  }
}
