// Spatial filters in SQLite: the R*Tree `feature_bounds` narrows the candidates, an exact test inside the SQL decides.
import type Database from 'better-sqlite3';
import type { SpatialFilter } from '../../geo/spatial-filter.js';
import type { BBox } from '../../geo/bbox.js';
import type { Geometry } from '../../geo/geometry.js';
import { spatialPredicate } from '../../geo/spatial-predicate.js';
import type { SqlFragment } from './filter-sql.js';

/**
 * The features of one read in insertion order, as `FROM … WHERE … ORDER BY` over features `f` (without LIMIT), and
 * its parameters for the page after a seq.
 */
export interface OrderedSource {
  sql: string;
  params(after: number): unknown[];
}

/**
 * How many times dearer one candidate of an R*Tree-driven page is than one feature of a scan in seq order: each page
 * of the R*Tree plan reads and sorts every candidate after the page start, a scan reads the space's features until
 * the page is full. Measured on 1,000,000 points (docs/decisions.md, "SQLite spatial index").
 */
const CANDIDATE_COST = 4;

/** Whether a geometry meets the filter of the statement running. */
type ExactTest = (geometry: Geometry) => boolean;

/** The box every match of the filter lies in. */
export function spatialBounds(filter: SpatialFilter): BBox {
  return filter.kind === 'box' ? filter.box : filter.bounds;
}

/**
 * The exact test over features `f`, cheapest first: the exact bounds columns must meet the filter's bounds (features
 * without geometry have none and never match); a box holds every feature whose bounds lie inside it (a point's bounds
 * always do when they meet it), with no parse; anything else goes to `hub_spatial`, a point as its coordinates and
 * other geometries as their text.
 */
function compileExact(filter: SpatialFilter): SqlFragment {
  const [west, south, east, north] = spatialBounds(filter);
  const meets = 'f.min_x <= ? AND f.max_x >= ? AND f.min_y <= ? AND f.max_y >= ?';
  const test = "hub_spatial(CASE WHEN f.geometry_type = 'Point' THEN NULL ELSE json_extract(f.json, '$.geometry') END, f.min_x, f.min_y)";
  if (filter.kind !== 'box') return { sql: `(${meets} AND ${test})`, params: [east, west, north, south] };
  return {
    sql: `(${meets} AND ((f.min_x >= ? AND f.max_x <= ? AND f.min_y >= ? AND f.max_y <= ?) OR ${test}))`,
    params: [east, west, north, south, west, east, south, north],
  };
}

/**
 * The R*Tree entries meeting a box, of every space (feature_bounds; feature_history_bounds alike); `r.seq` is the
 * feature's seq, and the feature row tells its space. Entries are rounded outward, never short. The space is no R*Tree dimension: all entries of one space
 * share it, the R*-tree then splits its nodes along it rather than by place, and a box of 100 points among
 * 1,000,000 took 6 ms instead of 0.01 ms.
 */
export const INDEX_CANDIDATES = 'r.min_x <= ? AND r.max_x >= ? AND r.min_y <= ? AND r.max_y >= ?';

export function candidateParams([west, south, east, north]: BBox): unknown[] {
  return [east, west, north, south];
}

/** A spatial read as SQL: its exact test for the statements, and the prepared test to install while they run. */
export interface SpatialPlan {
  exact: SqlFragment;
  /** Whether the pages are driven by the R*Tree (small boxes) rather than by a scan of the space in seq order. */
  byIndex: boolean;
  /** Runs one statement of this read with its exact test installed. */
  during<T>(run: () => T): T;
  /** The read's features in seq order after a seq, also meeting `where` (tags and properties). */
  source(where: SqlFragment): OrderedSource;
}

export class SpatialIndex {
  /**
   * The exact test of the statement running. better-sqlite3 runs one statement at a time on the connection and
   * to its end, so the test is installed for each statement: prepared once per read, with nothing to look up per row.
   */
  private test: ExactTest | undefined;
  private readonly countCandidates;

  constructor(db: Database.Database) {
    db.function('hub_spatial', { deterministic: true }, (geometry: unknown, x: unknown, y: unknown) => {
      if (this.test === undefined) throw new Error('hub_spatial runs only inside a spatial read');
      const tested: Geometry = typeof geometry === 'string'
        ? JSON.parse(geometry) as Geometry
        : { type: 'Point', coordinates: [x as number, y as number] };
      return this.test(tested) ? 1 : 0;
    });
    this.countCandidates = db.prepare<unknown[], number>(
      `SELECT count(*) FROM (SELECT 1 FROM feature_bounds r WHERE ${INDEX_CANDIDATES} LIMIT ?)`).pluck();
  }

  /**
   * Chooses how the read's pages are found. An R*Tree-driven page reads and sorts all C candidates of the box after its
   * start, a page scanned in seq order reads about pageSize × N / C of the space's N features: the R*Tree drives while
   * CANDIDATE_COST × C < pageSize × N / C. Counting C stops at that limit, so the choice costs at most one such page.
   */
  plan(sid: number, filter: SpatialFilter, pageSize: number, featureCount: number): SpatialPlan {
    const bounds = spatialBounds(filter);
    const limit = Math.ceil(Math.sqrt((pageSize * featureCount) / CANDIDATE_COST));
    const byIndex = this.countCandidates.get(...candidateParams(bounds), limit)! < limit;
    const exact = compileExact(filter);
    const test = spatialPredicate(filter);
    const during = <T>(run: () => T): T => {
      this.test = test;
      try {
        return run();
      } finally {
        this.test = undefined;
      }
    };
    const source = (where: SqlFragment): OrderedSource => byIndex
      ? {
          // The subquery's LIMIT keeps it from being flattened into the join: the candidates are sorted by seq first
          // (integers only), and features are read and tested in that order until the page is full.
          sql: `FROM (SELECT r.seq FROM feature_bounds r WHERE ${INDEX_CANDIDATES} AND r.seq > ? ORDER BY r.seq LIMIT -1) c
            CROSS JOIN features f ON f.seq = c.seq WHERE f.sid = ? AND ${exact.sql} AND ${where.sql} ORDER BY c.seq`,
          params: (after) => [...candidateParams(bounds), after, sid, ...exact.params, ...where.params],
        }
      : {
          sql: `FROM features f WHERE f.sid = ? AND f.seq > ? AND ${exact.sql} AND ${where.sql} ORDER BY f.seq`,
          params: (after) => [sid, after, ...exact.params, ...where.params],
        };
    return { exact, byIndex, during, source };
  }
}
