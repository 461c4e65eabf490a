// Checks incoming GeoJSON geometries against the API contract and names the exact offending spot.
import { GEOMETRY_TYPES, isGeometryType, type GeometryType } from './geometry.js';

/**
 * A problem below the top of the coordinates. `at` is its path, innermost first
 * ("position 3 of ring 0"), empty when it concerns the geometry as a whole.
 * Only built on failure, so valid geometries allocate nothing.
 */
interface Problem {
  at: string;
  issue: string;
}

type ArrayCheck = (items: readonly unknown[]) => Problem | null;

const SUPPORTED_TYPES = GEOMETRY_TYPES.join(', ');

const AXES = ['longitude', 'latitude', 'altitude'];

// Altitude has no bound: heights and depths come in whatever unit the data set uses.
const AXIS_LIMITS = [180, 90, Infinity];

const EXPECTED_COORDINATES: Record<GeometryType, string> = {
  Point: 'a position (an array of 2 or 3 numbers)',
  MultiPoint: 'an array of positions',
  LineString: 'an array of positions',
  MultiLineString: 'an array of lines (arrays of positions)',
  Polygon: 'an array of rings (arrays of positions)',
  MultiPolygon: 'an array of polygons (arrays of rings)',
};

// Array.isArray narrows to any[]; this keeps elements unknown so each one gets checked.
function isArray(value: unknown): value is readonly unknown[] {
  return Array.isArray(value);
}

function show(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

function nest(problem: Problem, outer: string): Problem {
  return { at: problem.at === '' ? outer : `${problem.at} of ${outer}`, issue: problem.issue };
}

function positionIssue(value: unknown): string | null {
  if (!isArray(value)) return `must be a position (an array of 2 or 3 numbers), not ${show(value)}`;
  const length = value.length;
  if (length !== 2 && length !== 3) return `has ${plural(length, 'value')}; a position has 2 or 3 numbers`;
  for (let axis = 0; axis < length; axis++) {
    const coordinate = value[axis];
    if (typeof coordinate !== 'number' || !Number.isFinite(coordinate)) {
      return `has ${AXES[axis]} ${show(coordinate)}, which is not a finite number`;
    }
    const limit = AXIS_LIMITS[axis];
    if (coordinate < -limit || coordinate > limit) return `has ${AXES[axis]} ${coordinate}, outside [-${limit}, ${limit}]`;
  }
  return null;
}

function positionsProblem(positions: readonly unknown[]): Problem | null {
  for (let i = 0; i < positions.length; i++) {
    const issue = positionIssue(positions[i]);
    if (issue !== null) return { at: `position ${i}`, issue };
  }
  return null;
}

// Only called once every position has passed, so both ends are arrays of numbers.
function samePosition(a: readonly unknown[], b: readonly unknown[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return false;
  }
  return true;
}

// Positions are checked before counting them, so a wrongly nested array is reported as such.
function lineProblem(line: readonly unknown[]): Problem | null {
  const problem = positionsProblem(line);
  if (problem !== null || line.length >= 2) return problem;
  return { at: '', issue: `has ${plural(line.length, 'position')}; a LineString needs at least 2` };
}

function ringProblem(ring: readonly unknown[]): Problem | null {
  const problem = positionsProblem(ring);
  if (problem !== null) return problem;
  if (ring.length < 4) return { at: '', issue: `has ${plural(ring.length, 'position')}; a linear ring needs at least 4` };
  const first = ring[0] as readonly unknown[];
  const last = ring[ring.length - 1] as readonly unknown[];
  if (samePosition(first, last)) return null;
  return {
    at: '',
    issue: `is not closed: its first position ${JSON.stringify(first)} differs from its last ${JSON.stringify(last)}`,
  };
}

function eachProblem(items: readonly unknown[], noun: string, expected: string, check: ArrayCheck): Problem | null {
  for (let i = 0; i < items.length; i++) {
    const item = items[i];
    const problem = isArray(item) ? check(item) : { at: '', issue: `must be ${expected}, not ${show(item)}` };
    if (problem !== null) return nest(problem, `${noun} ${i}`);
  }
  return null;
}

function polygonProblem(rings: readonly unknown[]): Problem | null {
  if (rings.length === 0) return { at: '', issue: 'has no rings; a Polygon needs at least 1' };
  return eachProblem(rings, 'ring', 'an array of positions', ringProblem);
}

function multiPolygonProblem(polygons: readonly unknown[]): Problem | null {
  if (polygons.length === 0) return { at: '', issue: 'has no polygons; a MultiPolygon needs at least 1' };
  return eachProblem(polygons, 'polygon', 'an array of rings', polygonProblem);
}

function coordinatesProblem(type: GeometryType, coordinates: readonly unknown[]): Problem | null {
  switch (type) {
    case 'Point': {
      const issue = positionIssue(coordinates);
      return issue === null ? null : { at: '', issue };
    }
    case 'MultiPoint':
      return positionsProblem(coordinates);
    case 'LineString':
      return lineProblem(coordinates);
    case 'MultiLineString':
      return eachProblem(coordinates, 'line', 'an array of positions', lineProblem);
    case 'Polygon':
      return polygonProblem(coordinates);
    case 'MultiPolygon':
      return multiPolygonProblem(coordinates);
  }
}

/**
 * Returns null for a valid geometry (or none at all), otherwise what is wrong and where,
 * without mentioning the feature: callers add its index and id.
 */
export function validateGeometry(geometry: unknown): string | null {
  if (geometry === undefined || geometry === null) return null;
  if (typeof geometry !== 'object' || isArray(geometry)) return `a geometry must be an object, not ${show(geometry)}`;
  const { type, coordinates } = geometry as { type?: unknown; coordinates?: unknown };
  if (type === undefined) return `the geometry has no "type"; expected one of ${SUPPORTED_TYPES}`;
  if (typeof type !== 'string' || !isGeometryType(type)) {
    return `the type ${show(type)} is not supported; expected one of ${SUPPORTED_TYPES}`;
  }
  if (coordinates === undefined) return `the ${type} has no "coordinates"`;
  if (!isArray(coordinates)) {
    return `the coordinates of the ${type} must be ${EXPECTED_COORDINATES[type]}, not ${show(coordinates)}`;
  }
  const problem = coordinatesProblem(type, coordinates);
  if (problem === null) return null;
  return problem.at === '' ? `the ${type} ${problem.issue}` : `${problem.at} of the ${type} ${problem.issue}`;
}
