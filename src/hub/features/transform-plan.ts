// The steps a read applies to each stored feature on its way out; a read with none streams the stored text as it is.
import { force2D } from '../../geo/coordinates.js';
import type { Geometry } from '../../geo/geometry.js';
import { applySelection, type Selection } from '../feature-selection.js';

export type FeatureObject = Record<string, unknown>;

/** One transformation of a parsed feature; `undefined` leaves the feature out of the answer. */
export interface TransformStep {
  readonly name: string;
  apply(feature: FeatureObject): FeatureObject | undefined;
}

/** The steps in the order they run; empty for a read that returns features as stored. */
export type TransformPlan = readonly TransformStep[];

/** What a read request asks of its features. */
export interface TransformRequest {
  force2D: boolean;
  selection?: Selection;
}

const force2DStep: TransformStep = {
  name: 'force2D',
  apply: (feature) => (feature.geometry ? { ...feature, geometry: force2D(feature.geometry as Geometry) } : feature),
};

const selectionStep = (selection: Selection): TransformStep => ({
  name: 'selection',
  apply: (feature) => applySelection(feature, selection),
});

/** Geometry steps come first: a selection may drop the geometry they work on. */
export function planTransforms(request: TransformRequest): TransformPlan {
  const steps: TransformStep[] = [];
  if (request.force2D) steps.push(force2DStep);
  if (request.selection) steps.push(selectionStep(request.selection));
  return steps;
}

/** The feature text after every step, or undefined when a step left the feature out. */
export function transformText(json: string, plan: TransformPlan): string | undefined {
  if (plan.length === 0) return json;
  let feature: FeatureObject | undefined = JSON.parse(json) as FeatureObject;
  for (const step of plan) {
    feature = step.apply(feature);
    if (feature === undefined) return undefined;
  }
  return JSON.stringify(feature);
}
