// What `mode=viz` and `tweaks` make of a read (API.md 6.3): a stable sample by estimated count, stripped properties, simplified geometries.
import type { FeatureQuery } from '../../core/feature-query.js';
import type { BBox } from '../../geo/bbox.js';
import type { Geometry } from '../../geo/geometry.js';
import { simplify } from '../../geo/simplify.js';
import type { TransformStep } from './transform-plan.js';

export type VizSampling = 'off' | 'low' | 'med' | 'high';

/** `mode=viz` on a tile. */
export interface VizRead {
  sampling: VizSampling;
  /** `selection` or `tweaks.defaultselection=true` keep properties; otherwise viz strips them. */
  keepProperties: boolean;
}

export type TweakKind = 'sampling' | 'simplification' | 'ensure';

/** `tweaks=…` on a bbox or tile. */
export interface Tweaks {
  kind: TweakKind;
  /** 1 (gentle) .. 100 (strong); the words low, lowmed, med, medhigh, high are 10, 30, 50, 70, 90. */
  strength: number;
  /** `ensure`: the most features shown before sampling starts. */
  samplingThreshold: number;
}

/** Features in a viz tile above which it is sampled (API.md 6.3). */
const VIZ_THRESHOLD: Record<Exclude<VizSampling, 'off'>, number> = { high: 15_000, med: 30_000, low: 70_000 };

/** Estimate ÷ threshold up to each bound keeps about 1 in `ratio` features (API.md 6.3). */
const VIZ_RATIOS: ReadonlyArray<{ upTo: number; ratio: number }> = [
  { upTo: 1, ratio: 1 }, { upTo: 3, ratio: 3 }, { upTo: 4, ratio: 4 }, { upTo: 8, ratio: 8 },
  { upTo: 32, ratio: 32 }, { upTo: 128, ratio: 128 }, { upTo: 1024, ratio: 1024 },
];
const LARGEST_RATIO = 4096;

/**
 * Counting stops beyond this share of the threshold: past it every estimate keeps 1 in 4,096, so a low
 * zoom tile over a huge space costs a bounded count, not a full one.
 */
const COUNT_BEYOND = 1024;

function vizRatio(estimate: number, threshold: number): number {
  return VIZ_RATIOS.find(({ upTo }) => estimate <= threshold * upTo)?.ratio ?? LARGEST_RATIO;
}

/** A tweak's sampling keeps about 1 in 2^(strength/10) features: 2 at strength 10, 32 at 50, 512 at 90. */
const tweakRatio = (strength: number): number => Math.max(2, Math.round(2 ** (strength / 10)));

/**
 * How a read samples: the ratio (1 for none) from the estimated count where sampling depends on it.
 * `estimate(limit)` counts the query's features up to `limit`.
 */
export async function samplingRatio(viz: VizRead | undefined, tweaks: Tweaks | undefined,
  estimate: (limit: number) => Promise<number>): Promise<number> {
  if (viz && viz.sampling !== 'off') {
    const threshold = VIZ_THRESHOLD[viz.sampling];
    return vizRatio(await estimate(threshold * COUNT_BEYOND + 1), threshold);
  }
  if (tweaks?.kind === 'sampling') return tweakRatio(tweaks.strength);
  if (tweaks?.kind === 'ensure') {
    const count = await estimate(tweaks.samplingThreshold * LARGEST_RATIO + 1);
    return count <= tweaks.samplingThreshold ? 1 : 2 ** Math.ceil(Math.log2(count / tweaks.samplingThreshold));
  }
  return 1;
}

/** The query with its sample: the same stable subset on every read (see `FeatureFilter.sample`). */
export function sampled<Q extends Omit<FeatureQuery, 'ids' | 'afterSeq'>>(query: Q, ratio: number): Q {
  return ratio > 1 ? { ...query, sample: ratio } : query;
}

/** Viz keeps id, type and geometry, with empty properties. */
export const stripProperties: TransformStep = {
  name: 'stripProperties',
  apply: (feature) => ({ type: feature.type, id: feature.id, geometry: feature.geometry ?? null, properties: {} }),
};

/**
 * `tweaks=simplification`: Douglas-Peucker with a tolerance of strength/50 of a pixel of a 256-pixel
 * rendering of the area, topology kept (no ring collapses into a crossing).
 */
export function simplifyStep(area: BBox, strength: number): TransformStep {
  const tolerance = ((area[2] - area[0]) / 256) * (strength / 50);
  return {
    name: 'simplify',
    apply: (feature) => (feature.geometry ? { ...feature, geometry: simplify(feature.geometry as Geometry, tolerance) } : feature),
  };
}
