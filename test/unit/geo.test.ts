// Unit tests for geometry validation, bounding boxes and coordinate transforms.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateGeometry } from '../../src/geo/geometry-validation.js';
import { geometryBBox } from '../../src/geo/bbox.js';
import { force2D, hasOnly3DPositions, pad3D, roundPositions } from '../../src/geo/coordinates.js';
import type { Geometry, MultiPolygon, Position } from '../../src/geo/geometry.js';

// Fiji from countries.geo.json: several polygons, touching both sides of the antimeridian.
const FIJI: MultiPolygon = {
  type: 'MultiPolygon',
  coordinates: [
    [[[178.3736, -17.33992], [178.71806, -17.62846], [178.55271, -18.15059], [177.93266, -18.28799], [177.38146, -18.16432], [177.28504, -17.72465], [177.67087, -17.38114], [178.12557, -17.50481], [178.3736, -17.33992]]],
    [[[179.364143, -16.801354], [178.725059, -17.012042], [178.596839, -16.63915], [179.096609, -16.433984], [179.413509, -16.379054], [180, -16.067133], [180, -16.555217], [179.364143, -16.801354]]],
    [[[-179.917369, -16.501783], [-180, -16.555217], [-180, -16.067133], [-179.79332, -16.020882], [-179.917369, -16.501783]]],
  ],
};

const SQUARE: Position[] = [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]];
const HOLE: Position[] = [[0.2, 0.2], [0.2, 0.8], [0.8, 0.8], [0.2, 0.2]];

function problemOf(geometry: unknown): string {
  const problem = validateGeometry(geometry);
  assert.notEqual(problem, null, `expected ${JSON.stringify(geometry)} to be invalid`);
  return problem ?? '';
}

function assertProblem(geometry: unknown, ...fragments: string[]): void {
  const problem = problemOf(geometry);
  for (const fragment of fragments) assert.ok(problem.includes(fragment), `"${problem}" should mention "${fragment}"`);
}

test('absent geometries are left to the caller', () => {
  assert.equal(validateGeometry(undefined), null);
  assert.equal(validateGeometry(null), null);
});

test('valid geometries of every supported type pass', () => {
  const valid: Geometry[] = [
    { type: 'Point', coordinates: [-87.637596, 41.882373] },
    { type: 'Point', coordinates: [8.5417, 47.3769, 408] },
    { type: 'Point', coordinates: [-180, -90, -10994] },
    { type: 'Point', coordinates: [180, 90] },
    { type: 'MultiPoint', coordinates: [[0, 0], [1, 1, 1]] },
    { type: 'MultiPoint', coordinates: [] },
    { type: 'LineString', coordinates: [[0, 0], [1, 1]] },
    { type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2, 5], [3, 3, 6]]] },
    { type: 'MultiLineString', coordinates: [] },
    { type: 'Polygon', coordinates: [SQUARE] },
    { type: 'Polygon', coordinates: [SQUARE, HOLE] },
    { type: 'Polygon', coordinates: [[[0, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 1]]] },
    FIJI,
  ];
  for (const geometry of valid) assert.equal(validateGeometry(geometry), null, JSON.stringify(geometry));
});

test('winding order is not checked', () => {
  const clockwise = [...SQUARE].reverse();
  assert.equal(validateGeometry({ type: 'Polygon', coordinates: [clockwise, [...HOLE].reverse()] }), null);
});

test('extra members such as bbox are allowed', () => {
  assert.equal(validateGeometry({ type: 'Point', coordinates: [1, 2], bbox: [1, 2, 1, 2], crs: 'x' }), null);
});

test('a geometry must be an object', () => {
  assertProblem('POINT (1 2)', 'must be an object', '"POINT (1 2)"');
  assertProblem(42, 'must be an object', '42');
  assertProblem([1, 2], 'must be an object', 'an array');
});

test('the type must be one of the six supported ones', () => {
  const supported = 'Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon';
  assert.equal(
    validateGeometry({ type: 'GeometryCollection', geometries: [] }),
    `the type "GeometryCollection" is not supported; expected one of ${supported}`,
  );
  assertProblem({ type: 'point', coordinates: [1, 2] }, '"point"', 'not supported');
  assertProblem({ type: 'Feature', geometry: null }, '"Feature"', 'not supported');
  assertProblem({ type: 7, coordinates: [1, 2] }, 'type 7', 'not supported');
  assertProblem({ coordinates: [1, 2] }, 'no "type"', supported);
});

test('coordinates must be present and an array', () => {
  assert.equal(validateGeometry({ type: 'LineString' }), 'the LineString has no "coordinates"');
  assertProblem({ type: 'Point', coordinates: null }, 'coordinates of the Point', 'a position', 'null');
  assertProblem({ type: 'Point', coordinates: '1,2' }, 'coordinates of the Point', '"1,2"');
  assertProblem({ type: 'MultiPoint', coordinates: {} }, 'coordinates of the MultiPoint', 'array of positions', 'an object');
  assertProblem({ type: 'Polygon', coordinates: 3 }, 'coordinates of the Polygon', 'array of rings');
});

test('coordinates must be nested as the type requires', () => {
  assertProblem({ type: 'Point', coordinates: [[1, 2]] }, 'the Point', '1 value');
  assertProblem({ type: 'Point', coordinates: [[1, 2], [3, 4]] }, 'the Point', 'longitude an array', 'not a finite number');
  assertProblem({ type: 'LineString', coordinates: [1, 2] }, 'position 0 of the LineString', 'must be a position', 'not 1');
  assertProblem({ type: 'MultiLineString', coordinates: [[0, 0], [1, 1]] }, 'position 0 of line 0 of the MultiLineString');
  assertProblem({ type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], 5] }, 'line 1 of the MultiLineString', 'must be an array of positions', 'not 5');
  assertProblem({ type: 'Polygon', coordinates: SQUARE }, 'position 0 of ring 0 of the Polygon', 'must be a position', 'not 0');
  assertProblem({ type: 'Polygon', coordinates: [SQUARE, 'hole'] }, 'ring 1 of the Polygon', 'must be an array of positions');
  assertProblem({ type: 'MultiPolygon', coordinates: [SQUARE] }, 'position 0 of ring 0 of polygon 0 of the MultiPolygon', 'must be a position', 'not 0');
  assertProblem({ type: 'MultiPolygon', coordinates: [[SQUARE], null] }, 'polygon 1 of the MultiPolygon', 'must be an array of rings', 'null');
});

test('a position has 2 or 3 numbers', () => {
  assert.equal(validateGeometry({ type: 'Point', coordinates: [1, 2, 3, 4] }), 'the Point has 4 values; a position has 2 or 3 numbers');
  assertProblem({ type: 'Point', coordinates: [1] }, 'the Point', '1 value;');
  assertProblem({ type: 'Point', coordinates: [] }, 'the Point', '0 values');
  assertProblem({ type: 'MultiPoint', coordinates: [[0, 0], [0, 0, 0, 0]] }, 'position 1 of the MultiPoint', '4 values');
});

test('coordinates must be finite numbers, not strings', () => {
  assertProblem({ type: 'Point', coordinates: ['8.5', 47.3] }, 'the Point', 'longitude "8.5"', 'not a finite number');
  assertProblem({ type: 'Point', coordinates: [8.5, NaN] }, 'latitude NaN');
  assertProblem({ type: 'Point', coordinates: [8.5, 47.3, Infinity] }, 'altitude Infinity');
  assertProblem({ type: 'Point', coordinates: [8.5, null] }, 'latitude null');
  assertProblem({ type: 'LineString', coordinates: [[0, 0], [true, 0]] }, 'position 1 of the LineString', 'longitude true');
});

test('longitude and latitude must be in range; altitude is unbounded', () => {
  assert.equal(
    validateGeometry({ type: 'LineString', coordinates: [[0, 0], [1, 1], [2, 2], [3, 3], [4, 4], [200, 5]] }),
    'position 5 of the LineString has longitude 200, outside [-180, 180]',
  );
  assertProblem({ type: 'Point', coordinates: [-180.0001, 0] }, 'longitude -180.0001', '[-180, 180]');
  assertProblem({ type: 'Point', coordinates: [0, 90.5] }, 'latitude 90.5', '[-90, 90]');
  assertProblem({ type: 'Point', coordinates: [0, -91] }, 'latitude -91');
  // Swapped lat/lon is a common mistake in uploads.
  assertProblem({ type: 'Point', coordinates: [41.882373, -87.637596 - 10] }, 'latitude -97.637596');
  assert.equal(validateGeometry({ type: 'Point', coordinates: [0, 0, 1e7] }), null);
  assert.equal(validateGeometry({ type: 'Point', coordinates: [0, 0, -1e7] }), null);
});

test('a LineString needs at least 2 positions, also inside a MultiLineString', () => {
  assert.equal(validateGeometry({ type: 'LineString', coordinates: [[0, 0]] }), 'the LineString has 1 position; a LineString needs at least 2');
  assertProblem({ type: 'LineString', coordinates: [] }, 'the LineString has 0 positions');
  assertProblem({ type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[2, 2]]] }, 'line 1 of the MultiLineString', '1 position', 'at least 2');
});

test('a Polygon needs a ring and a MultiPolygon a polygon', () => {
  assert.equal(validateGeometry({ type: 'Polygon', coordinates: [] }), 'the Polygon has no rings; a Polygon needs at least 1');
  assert.equal(validateGeometry({ type: 'MultiPolygon', coordinates: [] }), 'the MultiPolygon has no polygons; a MultiPolygon needs at least 1');
  assertProblem({ type: 'MultiPolygon', coordinates: [[SQUARE], []] }, 'polygon 1 of the MultiPolygon', 'no rings');
});

test('a linear ring has at least 4 positions', () => {
  assertProblem({ type: 'Polygon', coordinates: [[[0, 0], [1, 1], [0, 0]]] }, 'ring 0 of the Polygon', '3 positions', 'at least 4');
  assertProblem({ type: 'Polygon', coordinates: [SQUARE, [[0, 0], [0, 0]]] }, 'ring 1 of the Polygon', '2 positions');
});

test('a linear ring is closed, compared on all its numbers', () => {
  const open = [[1, 2], [5, 0], [5, 5], [3, 4]];
  assert.equal(
    validateGeometry({ type: 'MultiPolygon', coordinates: [[SQUARE], [SQUARE], [open]] }),
    'ring 0 of polygon 2 of the MultiPolygon is not closed: its first position [1,2] differs from its last [3,4]',
  );
  assertProblem({ type: 'Polygon', coordinates: [SQUARE, [[0.2, 0.2], [0.2, 0.8], [0.8, 0.8], [0.2, 0.3]]] }, 'ring 1 of the Polygon', 'not closed');
  assertProblem(
    { type: 'Polygon', coordinates: [[[0, 0, 1], [1, 0, 1], [0, 1, 1], [0, 0, 2]]] },
    'not closed',
    '[0,0,1]',
    '[0,0,2]',
  );
  assertProblem({ type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 1], [0, 0, 0]]] }, 'not closed', '[0,0]', '[0,0,0]');
});

test('the first problem is reported with its full path', () => {
  const fiji = structuredClone(FIJI);
  const polygon = fiji.coordinates[1];
  const ring = polygon?.[0];
  assert.ok(ring);
  ring[3] = [179.096609, -96.433984];
  assert.equal(
    validateGeometry(fiji),
    'position 3 of ring 0 of polygon 1 of the MultiPolygon has latitude -96.433984, outside [-90, 90]',
  );
});

test('geometryBBox spans all positions', () => {
  assert.deepEqual(geometryBBox({ type: 'Point', coordinates: [8.5417, 47.3769, 408] }), [8.5417, 47.3769, 8.5417, 47.3769]);
  assert.deepEqual(geometryBBox({ type: 'LineString', coordinates: [[3, -1], [-2, 4], [0, 0]] }), [-2, -1, 3, 4]);
  assert.deepEqual(geometryBBox({ type: 'Polygon', coordinates: [SQUARE, HOLE] }), [0, 0, 1, 1]);
  assert.deepEqual(geometryBBox({ type: 'MultiLineString', coordinates: [[[0, 0], [1, 1]], [[-5, 2], [2, 3]]] }), [-5, 0, 2, 3]);
  assert.deepEqual(geometryBBox(FIJI), [-180, -18.28799, 180, -16.020882]);
});

test('geometryBBox is null without positions', () => {
  assert.equal(geometryBBox({ type: 'MultiPoint', coordinates: [] }), null);
  assert.equal(geometryBBox({ type: 'MultiLineString', coordinates: [] }), null);
});

test('roundPositions keeps 8 decimals and the dimensionality', () => {
  const rounded = roundPositions({ type: 'LineString', coordinates: [[1.123456789, -2.000000004], [3.999999996, 4, 100.123456789123]] });
  assert.deepEqual(rounded, { type: 'LineString', coordinates: [[1.12345679, -2], [4, 4, 100.12345679]] });
});

test('roundPositions leaves values with at most 8 decimals exactly as they are', () => {
  assert.deepEqual(roundPositions(FIJI), FIJI);
  assert.deepEqual(roundPositions({ type: 'Point', coordinates: [-87.637596, 41.882373] }).coordinates, [-87.637596, 41.882373]);
  // A deterministic spread of coordinates with 1 to 8 decimals.
  let seed = 12345;
  for (let i = 0; i < 10000; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const value = Number(((seed / 2147483648) * 360 - 180).toFixed(1 + (i % 8)));
    const position = roundPositions({ type: 'Point', coordinates: [value, 0] }).coordinates;
    assert.equal(position[0], value);
  }
  assert.deepEqual(roundPositions({ type: 'Point', coordinates: [0, 0, 123456789012.5] }).coordinates, [0, 0, 123456789012.5]);
});

test('roundPositions never yields negative zero', () => {
  const position = roundPositions({ type: 'Point', coordinates: [-0.000000001, -0, -0.000000004] }).coordinates;
  assert.ok(position.every((value) => Object.is(value, 0)), JSON.stringify(position.map((value) => Object.is(value, -0))));
});

test('roundPositions keeps other members and does not mutate its input', () => {
  const input: Geometry = { type: 'Polygon', coordinates: [[[0, 0], [1.000000001, 0], [1, 1], [0, 0]]], bbox: [0, 0, 1, 1] };
  const copy = structuredClone(input);
  const rounded = roundPositions(input);
  assert.deepEqual(rounded, { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]], bbox: [0, 0, 1, 1] });
  assert.deepEqual(input, copy);
});

test('pad3D gives 2D positions altitude 0 and keeps 3D ones', () => {
  const mixed: Geometry = { type: 'MultiPoint', coordinates: [[1, 2], [3, 4, 5]] };
  assert.deepEqual(pad3D(mixed), { type: 'MultiPoint', coordinates: [[1, 2, 0], [3, 4, 5]] });
  assert.deepEqual(mixed.coordinates, [[1, 2], [3, 4, 5]]);
  assert.deepEqual(pad3D({ type: 'Point', coordinates: [1, 2] }), { type: 'Point', coordinates: [1, 2, 0] });
  const padded = pad3D(FIJI);
  assert.equal(padded.type, 'MultiPolygon');
  assert.ok(hasOnly3DPositions(padded));
  assert.deepEqual(force2D(padded), FIJI);
});

test('pad3D returns an all-3D geometry itself', () => {
  const point: Geometry = { type: 'Point', coordinates: [8.5417, 47.3769, 408] };
  assert.equal(pad3D(point), point);
  const empty: Geometry = { type: 'MultiPoint', coordinates: [] };
  assert.equal(pad3D(empty), empty);
});

test('hasOnly3DPositions', () => {
  assert.equal(hasOnly3DPositions({ type: 'LineString', coordinates: [[0, 0, 0], [1, 1, 1]] }), true);
  assert.equal(hasOnly3DPositions({ type: 'LineString', coordinates: [[0, 0, 0], [1, 1]] }), false);
  assert.equal(hasOnly3DPositions(FIJI), false);
});

test('force2D drops altitude and keeps 2D positions', () => {
  assert.deepEqual(force2D({ type: 'Point', coordinates: [8.5417, 47.3769, 408] }), { type: 'Point', coordinates: [8.5417, 47.3769] });
  assert.deepEqual(
    force2D({ type: 'Polygon', coordinates: [[[0, 0, 1], [1, 0, 2], [1, 1], [0, 0, 1]]] }),
    { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 0]]] },
  );
});
