// Hand-checked cases of the spatial predicate, geodesic distance and bounds, clipping and geodesic buffers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BBox } from '../../src/geo/bbox.js';
import { clipToBox, clipToGeometry } from '../../src/geo/clip.js';
import { geodesicBuffer } from '../../src/geo/geodesic-buffer.js';
import { distanceBounds, geodesicDistance } from '../../src/geo/geodesic-distance.js';
import type { Geometry, Position } from '../../src/geo/geometry.js';
import { spatialPredicate } from '../../src/geo/spatial-predicate.js';

const UNIT_BOX: BBox = [0, 0, 1, 1];
const HOLED: Geometry = {
  type: 'Polygon',
  coordinates: [[[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]], [[2, 2], [8, 2], [8, 8], [2, 8], [2, 2]]],
};
// Fiji-like: one part each side of the antimeridian.
const ACROSS_ANTIMERIDIAN: Geometry = {
  type: 'MultiPolygon',
  coordinates: [
    [[[179, -17], [180, -17], [180, -16], [179, -16], [179, -17]]],
    [[[-180, -17], [-179, -17], [-179, -16], [-180, -16], [-180, -17]]],
  ],
};

const point = (longitude: number, latitude: number, altitude?: number): Geometry => ({
  type: 'Point',
  coordinates: altitude === undefined ? [longitude, latitude] : [longitude, latitude, altitude],
});
const inBox = (box: BBox) => spatialPredicate({ kind: 'box', box });
const inGeometry = (geometry: Geometry) => spatialPredicate({ kind: 'geometry', geometry, bounds: [-180, -90, 180, 90] });

test('points on a box edge or corner intersect it, points just outside do not', () => {
  const matches = inBox(UNIT_BOX);
  assert.equal(matches(point(1, 0.5)), true);
  assert.equal(matches(point(0, 0)), true);
  assert.equal(matches(point(0.5, 0.5, 100)), true);
  assert.equal(matches(point(1.000001, 0.5)), false);
});

test('a polygon touching the box edge intersects it; one whose bbox overlaps while its shape does not, does not', () => {
  const matches = inBox(UNIT_BOX);
  assert.equal(matches({ type: 'Polygon', coordinates: [[[1, 0], [2, 0], [2, 1], [1, 0]]] }), true);
  assert.equal(matches({ type: 'LineString', coordinates: [[1, 1], [2, 3]] }), true);
  assert.equal(matches({ type: 'Polygon', coordinates: [[[1.5, 0.6], [2, 2], [0.6, 1.5], [1.5, 0.6]]] }), false);
  assert.equal(matches({ type: 'Polygon', coordinates: [[[-1, -1], [2, -1], [2, 2], [-1, 2], [-1, -1]]] }), true);
});

test('a query inside a polygon hole does not intersect it; on the hole edge it does', () => {
  assert.equal(inGeometry(point(5, 5))(HOLED), false);
  assert.equal(inGeometry({ type: 'Polygon', coordinates: [[[3, 3], [4, 3], [4, 4], [3, 3]]] })(HOLED), false);
  assert.equal(inGeometry(point(2, 5))(HOLED), true);
  assert.equal(inGeometry(HOLED)(point(5, 5)), false);
  assert.equal(inGeometry(HOLED)(point(1, 1)), true);
});

test('a multipolygon on both sides of the antimeridian matches boxes at either side, not in between', () => {
  assert.equal(inBox([179.5, -16.5, 180, -16.2])(ACROSS_ANTIMERIDIAN), true);
  assert.equal(inBox([-180, -16.5, -179.5, -16.2])(ACROSS_ANTIMERIDIAN), true);
  assert.equal(inBox([-170, -16.5, 170, -16.2])(ACROSS_ANTIMERIDIAN), false);
  // On the sphere the two parts touch along the antimeridian: 0 m apart.
  assert.equal(geodesicDistance(ACROSS_ANTIMERIDIAN, point(180, -16.5)), 0);
});

test('distance filters measure on the spheroid: a degree of latitude at the equator is 110,574 m', () => {
  const distance = geodesicDistance(point(0, 0), point(0, 1));
  assert.ok(Math.abs(distance - 110574.4) < 1, String(distance));
  const within = spatialPredicate({ kind: 'distance', geometry: point(0, 0), radius: 110600, bounds: distanceBounds(point(0, 0), 110600) });
  assert.equal(within(point(0, 1)), true);
  assert.equal(within(point(0, 1.001)), false);
  const fromHole = geodesicDistance(point(5, 5), HOLED);
  assert.ok(fromHole > 3 * 110_000 && fromHole < 3 * 111_500, String(fromHole));
  assert.equal(geodesicDistance(point(1, 1), HOLED), 0);
});

test('a great-circle edge passes nearer a pole than its endpoints', () => {
  const line: Geometry = { type: 'LineString', coordinates: [[-90, 80], [90, 80]] };
  assert.equal(geodesicDistance(line, point(0, 90)), 0);
  const bounds = distanceBounds(line, 1000);
  assert.equal(bounds[3], 90);
});

test('distance bounds near a pole span every longitude up to the pole; across the antimeridian every longitude', () => {
  assert.deepEqual([distanceBounds(point(10, 89.5), 100_000)[0], distanceBounds(point(10, 89.5), 100_000)[2], distanceBounds(point(10, 89.5), 100_000)[3]], [-180, 180, 90]);
  const nearAntimeridian = distanceBounds(point(179.9, 0), 50_000);
  assert.equal(nearAntimeridian[0], -180);
  assert.equal(nearAntimeridian[2], 180);
  const plain = distanceBounds(point(10, 50), 10_000);
  assert.ok(plain[0] < 10 - 0.139 && plain[2] > 10 + 0.139 && plain[1] < 50 - 0.09 && plain[3] > 50 + 0.09, JSON.stringify(plain));
  assert.ok(plain[2] - plain[0] < 0.3);
});

test('a polygon cut by the box becomes a MultiPolygon; one touching it along an edge gives nothing', () => {
  const u: Geometry = { type: 'Polygon', coordinates: [[[0, 0], [3, 0], [3, 3], [2, 3], [2, 1], [1, 1], [1, 3], [0, 3], [0, 0]]] };
  const clipped = clipToBox(u, [0, 2, 3, 3]);
  assert.equal(clipped?.type, 'MultiPolygon');
  assert.equal(clipped?.type === 'MultiPolygon' ? clipped.coordinates.length : 0, 2);
  assert.equal(clipToBox({ type: 'Polygon', coordinates: [[[1, 0], [2, 0], [2, 1], [1, 1], [1, 0]]] }, UNIT_BOX), undefined);
  assert.equal(clipToBox(point(2, 2), UNIT_BOX), undefined);
  assert.deepEqual(clipToBox(point(0.5, 0.5, 7), UNIT_BOX), point(0.5, 0.5));
  assert.deepEqual(clipToGeometry({ type: 'LineString', coordinates: [[-1, 0.5], [2, 0.5]] }, { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]] }),
    { type: 'LineString', coordinates: [[0, 0.5], [1, 0.5]] });
});

test('a negative buffer shrinks a polygon, empties a thin one and gives nothing for points', () => {
  const square: Geometry = { type: 'Polygon', coordinates: [[[0, 0], [0.1, 0], [0.1, 0.1], [0, 0.1], [0, 0]]] };
  const shrunk = geodesicBuffer(square, -1000);
  assert.equal(shrunk?.type, 'Polygon');
  const ring: Position[] = shrunk?.type === 'Polygon' ? shrunk.coordinates[0] : [];
  const west = Math.min(...ring.map((position) => position[0]));
  assert.ok(Math.abs(west - 1000 / 111319.5) < 0.0002, String(west));
  assert.equal(geodesicBuffer(square, -6000), undefined);
  assert.equal(geodesicBuffer(point(0, 0), -10), undefined);
  const circle = geodesicBuffer(point(0, 60), 1000);
  assert.equal(circle?.type, 'Polygon');
  const vertices = circle?.type === 'Polygon' ? circle.coordinates[0] : [];
  for (const vertex of vertices) assert.ok(Math.abs(geodesicDistance(point(0, 60), { type: 'Point', coordinates: vertex }) - 1000) < 1);
});
