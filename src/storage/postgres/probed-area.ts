// Unfiltered area reads as prepared statements whose one plan fits sparse and dense areas alike: a capped index probe decides.
import { createHash } from 'node:crypto';
import type { FeatureQuery } from '../../core/feature-query.js';
import type { Prepared } from './database.js';
import { isEmptyFilter } from './filter-sql.js';

/**
 * Why a probe. For a small area the database spent more time planning a read than running it (0.3-0.5 ms against
 * 0.1 ms), and each request paid the parse of the statement on top. A prepared statement saves both, but its one
 * (generic) plan cannot see the area, so it always takes the GiST index: for an area holding most of a big space it
 * then reads every feature there to keep the first `n` in insertion order (13.7 s instead of 0.17 s for a world box
 * over 1,000,000 points with a limit of 1,000, where the planner walks the insertion order and stops after 1,000).
 *
 * So the statement reads at most `2n + 1` matching features from the index (the probe). When it finds fewer, it has
 * all of them and sorts them: the plan the planner would have chosen. When it finds more, the area is dense for this
 * `n`: the statement answers nothing and says so (`dense`), and the read goes on with the statement planned for its
 * values. The waste is bounded by the probe, `2n + 1` index matches, and only dense areas pay it.
 */
export const PROBE = (size: string) => `2 * ${size}::bigint + 1`;

/** The features of the probe when it came back short, in insertion order: all matches there are, up to `size`. */
export const PROBED = (size: string) =>
  `SELECT * FROM probe WHERE (SELECT count(*) FROM probe) < ${PROBE(size)} ORDER BY seq LIMIT ${size}`;

/** True when the probe came back full: the area is dense, and nothing was read. */
export const DENSE = (size: string) => `(SELECT count(*) FROM probe) >= ${PROBE(size)}`;

/** Reads that take a probe: an area and nothing else (filters and id lists keep their planned statements). */
export function probes(query: FeatureQuery): boolean {
  return query.spatial !== undefined && query.ids === undefined && isEmptyFilter(query);
}

/** Area read shapes are few (a spatial kind and a page form each); the bound only guards against a surprise. */
const MAX_NAMED = 256;
const named = new Map<string, Prepared>();

/**
 * The statement under a name of its text: the few shapes of area reads are each prepared once per connection. The
 * name is kept by text, so a read does not hash its statement again.
 */
export function prepared(text: string): Prepared {
  let statement = named.get(text);
  if (!statement) {
    if (named.size >= MAX_NAMED) named.clear();
    statement = { name: `area_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
    named.set(text, statement);
  }
  return statement;
}
