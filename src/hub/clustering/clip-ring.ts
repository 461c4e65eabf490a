// Clipping of a convex polygon ring to a lon/lat box (Sutherland–Hodgman), for clipped cells.
import type { BBox } from '../../geo/bbox.js';

type Point2 = [number, number];

/**
 * The closed ring of `ring` (closed, convex, such as an H3 cell) cut to `box`, or undefined when
 * nothing of it is inside. Cells are convex, so one pass per box edge is exact.
 */
export function clipRing(ring: readonly Point2[], box: BBox): Point2[] | undefined {
  const [west, south, east, north] = box;
  let points: Point2[] = ring.slice(0, -1);
  points = clipEdge(points, (p) => p[0] >= west, (a, b) => atX(a, b, west));
  points = clipEdge(points, (p) => p[0] <= east, (a, b) => atX(a, b, east));
  points = clipEdge(points, (p) => p[1] >= south, (a, b) => atY(a, b, south));
  points = clipEdge(points, (p) => p[1] <= north, (a, b) => atY(a, b, north));
  if (points.length < 3) return undefined;
  return [...points, points[0]];
}

function clipEdge(points: Point2[], inside: (p: Point2) => boolean, cross: (a: Point2, b: Point2) => Point2): Point2[] {
  const result: Point2[] = [];
  for (let index = 0; index < points.length; index++) {
    const current = points[index];
    const previous = points[(index + points.length - 1) % points.length];
    if (inside(current)) {
      if (!inside(previous)) result.push(cross(previous, current));
      result.push(current);
    } else if (inside(previous)) {
      result.push(cross(previous, current));
    }
  }
  return result;
}

function atX(a: Point2, b: Point2, x: number): Point2 {
  return [x, a[1] + ((b[1] - a[1]) * (x - a[0])) / (b[0] - a[0])];
}

function atY(a: Point2, b: Point2, y: number): Point2 {
  return [a[0] + ((b[0] - a[0]) * (y - a[1])) / (b[1] - a[1]), y];
}
