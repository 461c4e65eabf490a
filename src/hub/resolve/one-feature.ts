// A read of one feature whose text came with the space's lookup: handed out only once the caller may read the space.
import type { SpaceDefinition } from '../../core/space-definition.js';
import { AccessRecord, decide, type SpaceRef } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';

/** One feature of a space as a request reads it (by id, or as a `refSpaceId` reference). */
export interface OneFeature {
  readonly definition: SpaceDefinition;
  /** The feature's text, undefined when the space shows none; 403 first when the caller may not read the space. */
  read(): Promise<string | undefined>;
}

export class PrefetchedFeature implements OneFeature {
  constructor(private readonly caller: Claims, private readonly space: SpaceRef, private readonly feature: string | undefined) {}

  get definition(): SpaceDefinition {
    return this.space.definition;
  }

  read(): Promise<string | undefined> {
    decide(this.caller, new AccessRecord().read(this.space));
    return Promise.resolve(this.feature);
  }
}
