// A subscription's filter: which changed features it delivers, by a JSONPath over them and/or a geometry with a radius.
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { Geometry } from '../../geo/geometry.js';
import { validateGeometry } from '../../geo/geometry-validation.js';
import { geometryBBox } from '../../geo/bbox.js';
import { distanceBounds } from '../../geo/geodesic-distance.js';
import { type GeometryPredicate, spatialPredicate } from '../../geo/spatial-predicate.js';
import { checkFilters } from '../processors/jsonpath-filters.js';
import { MAX_RULE_LENGTH, ruleView, selectedFeatures } from '../processors/tagging-rules.js';

/** Half the Earth's circumference: every place is within it of every other. */
const MAX_RADIUS = 20_037_509;

/** The filter as stored and answered. */
export interface FilterSpec {
  /** A JSONPath over a FeatureCollection of the changed features, as the rule tagger takes it: a feature matches when the path selects it or anything in it. */
  jsonPath?: string;
  geometry?: Geometry;
  /** Metres around the geometry (on the spheroid, as spatial reads take it); 0 or absent: the geometry itself. */
  radius?: number;
}

const refuse = (problem: string): never => { throw hubError('invalidSubscription', { problem }); };

/** The filter of a request body (absent or null: every change), or a 400 naming what is wrong. */
export function filterSpecOf(given: unknown): FilterSpec | undefined {
  if (given === undefined || given === null) return undefined;
  if (!isObject(given)) return refuse('filter must be an object with jsonPath and/or geometry (and radius)');
  const unknown = Object.keys(given).filter((key) => !['jsonPath', 'geometry', 'radius'].includes(key));
  if (unknown.length > 0) refuse(`filter has unknown members ${unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 40))).join(', ')}; known: jsonPath, geometry, radius`);
  const { jsonPath, geometry, radius } = given;
  const spec: FilterSpec = {};
  if (jsonPath !== undefined) {
    if (typeof jsonPath !== 'string' || !jsonPath.startsWith('$') || jsonPath.length > MAX_RULE_LENGTH || jsonPath.includes('\u0000')) {
      refuse(`filter.jsonPath must be a JSONPath text starting with $, at most ${MAX_RULE_LENGTH} characters`);
    }
    spec.jsonPath = jsonPath as string;
    try {
      checkFilters(spec.jsonPath);
    } catch (error) {
      refuse(`filter.jsonPath does not parse: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}`);
    }
  }
  if (geometry !== undefined) {
    const problem = geometry === null ? 'it is null' : validateGeometry(geometry);
    if (problem !== null) refuse(`filter.geometry is not a valid GeoJSON geometry: ${problem}`);
    spec.geometry = geometry as Geometry;
  }
  if (radius !== undefined) {
    if (spec.geometry === undefined) refuse('filter.radius needs a filter.geometry to be around');
    if (typeof radius !== 'number' || !Number.isFinite(radius) || radius < 0 || radius > MAX_RADIUS) refuse(`filter.radius must be a number of metres from 0 to ${MAX_RADIUS}`);
    spec.radius = radius as number;
  }
  if (spec.jsonPath === undefined && spec.geometry === undefined) refuse('filter must have a jsonPath or a geometry (or both); leave it out to deliver every change');
  return spec;
}

/** A changed feature as the filter sees it: a state of it before or after the change. */
type FeatureState = { geometry?: Geometry | null } & Record<string, unknown>;

/** Which of a page of states a filter keeps, by index; every one without a filter. */
export class FeatureFilter {
  private readonly area?: GeometryPredicate;

  constructor(private readonly spec: FilterSpec | undefined) {
    const geometry = spec?.geometry;
    if (!geometry) return;
    const radius = spec.radius ?? 0;
    this.area = spatialPredicate(radius > 0
      ? { kind: 'distance', geometry, radius, bounds: distanceBounds(geometry, radius) }
      : { kind: 'geometry', geometry, bounds: geometryBBox(geometry) ?? [0, 0, 0, 0] });
  }

  keeps(states: readonly FeatureState[]): boolean[] {
    const kept = states.map((state) => !this.area || (state.geometry !== undefined && state.geometry !== null && this.area(state.geometry)));
    if (this.spec?.jsonPath === undefined) return kept;
    const selected = selectedFeatures({ tag: 'filter', path: this.spec.jsonPath }, ruleView({ type: 'FeatureCollection', features: states }) as object);
    return kept.map((keep, index) => keep && selected.has(index));
  }
}
