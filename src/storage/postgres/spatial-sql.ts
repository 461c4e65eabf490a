// Compiles a spatial filter (box, geometry, distance) into a PostgreSQL WHERE condition on the features table aliased `f`.
import type { SpatialFilter, SpatialRelation } from '../../geo/spatial-filter.js';
import type { BBox } from '../../geo/bbox.js';
import type { SqlParams } from './filter-sql.js';

/** The box as a 4326 polygon; `&&` with it is what the GiST index on (sid, geom) answers. */
function envelope([west, south, east, north]: BBox, params: SqlParams): string {
  return `ST_MakeEnvelope(${params.add(west)}::float8, ${params.add(south)}::float8, ${params.add(east)}::float8, ${params.add(north)}::float8, 4326)`;
}

/** The reference geometry, 2D like the stored ones. */
function geometry(value: object, params: SqlParams): string {
  return `ST_Force2D(ST_GeomFromGeoJSON(${params.add(JSON.stringify(value))}::text))`;
}

/** A box of no width or no height: its envelope is no valid polygon, so the exact test takes it as a line (boxLine). */
export const degenerate = ([west, south, east, north]: BBox): boolean => west === east || south === north;

/**
 * A box without width or height is the segment (or point) it covers. PostGIS finds nothing crossing a
 * flat envelope polygon, while the SQLite engine tests it as the line it is: as a line both agree.
 */
function boxLine([west, south, east, north]: BBox): object {
  return west === east && south === north
    ? { type: 'Point', coordinates: [west, south] }
    : { type: 'LineString', coordinates: [[west, south], [east, north]] };
}

/** The PostGIS function of each relation (the stored geometry first). */
const RELATIONS: Record<SpatialRelation | 'intersects', string> = {
  intersects: 'ST_Intersects', within: 'ST_Within', contains: 'ST_Contains', disjoint: 'ST_Disjoint', equals: 'ST_Equals', touches: 'ST_Touches',
  crosses: 'ST_Crosses', overlaps: 'ST_Overlaps',
};

/**
 * `&&` narrows by the index to the filter's bounds, then the exact predicate decides: `ST_Intersects` planar
 * on lon/lat, `ST_DWithin` on geography (spheroid) for distances. Rows without geometry have a NULL `geom`
 * and never match. A relation narrows by the index too, but disjoint, whose matches lie anywhere.
 */
export function compileSpatial(spatial: SpatialFilter, params: SqlParams): string {
  switch (spatial.kind) {
    case 'box': {
      const box = envelope(spatial.box, params);
      return `(f.geom && ${box} AND ST_Intersects(f.geom, ${degenerate(spatial.box) ? geometry(boxLine(spatial.box), params) : box}))`;
    }
    case 'geometry': {
      const reference = geometry(spatial.geometry, params);
      if (spatial.relation === 'disjoint') return `ST_Disjoint(f.geom, ${reference})`;
      return `(f.geom && ${envelope(spatial.bounds, params)} AND ${RELATIONS[spatial.relation ?? 'intersects']}(f.geom, ${reference}))`;
    }
    case 'distance':
      return `(f.geom && ${envelope(spatial.bounds, params)}
               AND ST_DWithin(f.geom::geography, ${geometry(spatial.geometry, params)}::geography, ${params.add(spatial.radius)}::float8))`;
  }
}
