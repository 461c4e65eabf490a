// The tagging-rules step of the write pipeline: each layer's rules tag the features written to it, as given, before the storage transaction.
import { ProcessorCache, runTaggingRules } from '../processors/space-processors.js';
import type { LayerTargets } from './layer-targets.js';
import type { WriteEntry } from './write-plan.js';

/**
 * Sets `ruleTags` on the entries whose layer has tagging rules; the plan adds them last, after addTags and
 * removeTags (docs/decisions.md, "Processors"). Rules see only the features written to their layer.
 */
export function applyTaggingRules(processors: ProcessorCache, targets: LayerTargets, entries: readonly WriteEntry[]): void {
  for (const index of new Set(entries.map((entry) => targets.targetOf(entry.id)))) {
    const layer = targets.layers[index];
    const compiled = processors.get(layer.id, layer.definition);
    if (compiled.rules.length === 0) continue;
    const written = entries.filter((entry) => entry.feature !== undefined && targets.targetOf(entry.id) === index);
    const features = written.map((entry) => {
      const input = entry.feature as NonNullable<WriteEntry['feature']>;
      const feature = { type: 'Feature', id: entry.id, ...input.extra, geometry: input.geometry ?? null, properties: input.properties ?? {} };
      return { feature, ruleTags: [] as string[] };
    });
    runTaggingRules(compiled, features);
    written.forEach((entry, at) => {
      if (features[at].ruleTags.length > 0) entry.ruleTags = features[at].ruleTags;
    });
  }
}
