// One feature a write changes, before and after: the write plan makes both parts once, the storage steps after it (the activity log) read them.
import type { FeatureParts } from './feature-text.js';

export type ChangeOperation = 'insert' | 'update' | 'delete';

/** Its state before (absent on insert) and after (absent on delete), each exactly as stored: positions padded to 3D. */
export interface FeatureChange {
  id: string;
  operation: ChangeOperation;
  before?: FeatureParts;
  after?: FeatureParts;
}
