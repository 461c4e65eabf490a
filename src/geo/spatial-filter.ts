// The spatial condition of a read (API.md 6): a box, a geometry with a DE-9IM relation, or a distance from a geometry.
import type { BBox } from './bbox.js';
import type { Geometry } from './geometry.js';

/**
 * How a stored geometry must relate to the filter's `geometry` (OGC CQL2 spatial functions), planar on lon/lat with the
 * DE-9IM semantics of PostGIS `ST_Within`, `ST_Contains`, … (the stored geometry first); absent: intersects. For
 * `disjoint` the filter's `bounds` are the whole world, as a match may lie anywhere.
 */
export type SpatialRelation = 'within' | 'contains' | 'disjoint' | 'equals' | 'touches' | 'crosses' | 'overlaps';

/**
 * A spatial condition of a read (API.md 6). `box` and `geometry` hold the features whose geometry
 * intersects it, planar on lon/lat like PostGIS `ST_Intersects` on `geometry(…, 4326)`; a box is
 * axis-aligned with west ≤ east and south ≤ north. `distance` holds the features within `radius`
 * metres (> 0) of the geometry on the WGS 84 spheroid, like `ST_DWithin` on `geography`.
 * `bounds` holds every possible match: the engines narrow their spatial index with it before the
 * exact test. Features without geometry never match.
 */
export type SpatialFilter =
  | { kind: 'box'; box: BBox }
  | { kind: 'geometry'; geometry: Geometry; bounds: BBox; relation?: SpatialRelation }
  | { kind: 'distance'; geometry: Geometry; radius: number; bounds: BBox };
