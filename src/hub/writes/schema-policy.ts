// The schema step of the write pipeline: each layer's schemas check the features it will store, exactly as stored.
import type { HubError } from '../../core/errors.js';
import type { FeatureParts } from '../feature-text.js';
import { NS } from '../namespace.js';
import { type ProcessorCache, schemaRefusal, type SpaceProcessors } from '../processors/space-processors.js';
import type { LayerTargets } from './layer-targets.js';
import type { WriteEntry } from './write-plan.js';

/** One planning's schema check: `check` sees each feature the plan stores, `refuse` throws the first refusal. */
export interface SchemaCheck {
  check?: (parts: FeatureParts, entry: WriteEntry) => void;
  refuse(): void;
}

/**
 * The schemas of the layers a write goes to. The plan calls the check on each feature as it will be stored (a
 * patch merged into the stored feature, the final tags); the refusal is answered after the rights of the plan are
 * decided: who may not write learns nothing of the schema (docs/decisions.md, "Processors").
 */
export class SchemaPolicy {
  private readonly compiled = new Map<number, SpaceProcessors>();

  constructor(processors: ProcessorCache, private readonly targets: LayerTargets, entries: readonly WriteEntry[]) {
    for (const index of new Set(entries.map((entry) => targets.targetOf(entry.id)))) {
      const layer = targets.layers[index];
      const compiled = processors.get(layer.id, layer.definition);
      if (compiled.validators.length > 0) this.compiled.set(index, compiled);
    }
  }

  /** A check for one planning of the write: the storage may plan its transaction again, from nothing refused. */
  start(): SchemaCheck {
    let refusal: HubError | undefined;
    const refuse = () => {
      if (refusal) throw refusal;
    };
    if (this.compiled.size === 0) return { refuse };
    const check = (parts: FeatureParts, entry: WriteEntry) => {
      const compiled = refusal ? undefined : this.compiled.get(this.targets.targetOf(entry.id));
      if (!compiled) return;
      refusal = schemaRefusal(compiled, {
        type: 'Feature', id: parts.id, ...parts.extra, geometry: parts.geometry, properties: { ...parts.properties, [NS]: parts.namespace },
      }, entry.position, entry.id);
    };
    return { check, refuse };
  }
}
