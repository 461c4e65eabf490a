// Coordinate transforms applied to geometries on their way into and out of storage.
import { positionLists, type Geometry, type Position } from './geometry.js';

const SCALE = 1e8;

// Beyond this magnitude x * SCALE exceeds 2^53, so rounding could change the value; such numbers
// cannot carry more than 8 decimals anyway.
const ROUNDING_LIMIT = Number.MAX_SAFE_INTEGER / SCALE;

type PositionMap = (position: Position) => Position;

function roundNumber(value: number): number {
  if (Math.abs(value) >= ROUNDING_LIMIT) return value;
  const rounded = Math.round(value * SCALE) / SCALE;
  // Math.round keeps the sign of small negatives, and -0 would leak into comparisons and hashes.
  return rounded === 0 ? 0 : rounded;
}

function roundPosition(position: Position): Position {
  return position.length === 3
    ? [roundNumber(position[0]), roundNumber(position[1]), roundNumber(position[2])]
    : [roundNumber(position[0]), roundNumber(position[1])];
}

function to3D(position: Position): Position {
  return position.length === 3 ? position : [position[0], position[1], 0];
}

function to2D(position: Position): Position {
  return [position[0], position[1]];
}

function mapPositions(geometry: Geometry, map: PositionMap): Geometry {
  switch (geometry.type) {
    case 'Point':
      return { ...geometry, coordinates: map(geometry.coordinates) };
    case 'MultiPoint':
    case 'LineString':
      return { ...geometry, coordinates: geometry.coordinates.map(map) };
    case 'MultiLineString':
    case 'Polygon':
      return { ...geometry, coordinates: geometry.coordinates.map((line) => line.map(map)) };
    case 'MultiPolygon':
      return {
        ...geometry,
        coordinates: geometry.coordinates.map((polygon) => polygon.map((ring) => ring.map(map))),
      };
  }
}

const isRoundedPosition = (position: Position): boolean => position.every((value) => roundNumber(value) === value);

function isRounded(geometry: Geometry): boolean {
  // A point, the most common geometry of a bulk write, without the lists positionLists allocates.
  if (geometry.type === 'Point') return isRoundedPosition(geometry.coordinates);
  for (const positions of positionLists(geometry)) {
    for (const position of positions) {
      for (const value of position) if (roundNumber(value) !== value) return false;
    }
  }
  return true;
}

/**
 * Rounds every coordinate to at most 8 decimals (about 1 mm), the precision the hub stores. Returns the
 * geometry itself when nothing needs rounding, as for most input, so bulk writes copy no coordinates.
 */
export function roundPositions(geometry: Geometry): Geometry {
  return isRounded(geometry) ? geometry : mapPositions(geometry, roundPosition);
}

/** True also for a geometry without positions. */
function hasOnlyPositionsOf(geometry: Geometry, dimensions: number): boolean {
  if (geometry.type === 'Point') return geometry.coordinates.length === dimensions;
  for (const positions of positionLists(geometry)) {
    for (const position of positions) {
      if (position.length !== dimensions) return false;
    }
  }
  return true;
}

/** True also for a geometry without positions, since there is nothing to pad. */
export const hasOnly3DPositions = (geometry: Geometry): boolean => hasOnlyPositionsOf(geometry, 3);
export const hasOnly2DPositions = (geometry: Geometry): boolean => hasOnlyPositionsOf(geometry, 2);

/** Gives 2D positions an altitude of 0; returns the geometry itself when nothing needs padding. */
export function pad3D(geometry: Geometry): Geometry {
  return hasOnly3DPositions(geometry) ? geometry : mapPositions(geometry, to3D);
}

export function force2D(geometry: Geometry): Geometry {
  return mapPositions(geometry, to2D);
}

/** The geometry itself when all its positions are 2D already, else a 2D copy. */
export function as2D(geometry: Geometry): Geometry {
  return hasOnlyPositionsOf(geometry, 2) ? geometry : force2D(geometry);
}
