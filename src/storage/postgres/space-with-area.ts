// The statement of SpaceStore.getWithArea: a space's lookup and the first page of a small area read of it, in one round trip.
import type { FeatureQuery, FeatureTextPage } from '../../core/feature-query.js';
import type { Prepared } from './database.js';
import { compileQuery } from './feature-store.js';
import { SqlParams } from './filter-sql.js';
import { DENSE, PROBE, PROBED, prepared, probes } from './probed-area.js';

/**
 * Features the first page holds at most. A small box (about 100 features) is then read whole. A larger area pays a
 * probe of at most 2 × this many index matches before it is read as before, as does an area whose answer the answer
 * cache holds already (the page is dropped unread): with 1,000 a 10,000-feature box cost the database about a tenth
 * more, with 250 a fortieth at most.
 */
export const FIRST_AREA_PAGE = 250;

/** The catalog row with its counters (as JOINED in space-store.ts), then the probed page (as queryText's). */
export type SpaceAreaRow = [sid: number, id: string, definition: string, location: string, contentUpdatedAt: number | null,
  revision: number | null, text: string | null, count: number, lastSeq: number | null, dense: boolean];

/** Whether the read's first page can come with its space's lookup: one a probe answers, at HEAD, from its start (not filtered, by id, at a version or resumed). */
export const firstPageReadable = (query: FeatureQuery): boolean => probes(query) && query.version === undefined && query.afterSeq === undefined;

/**
 * The statement and its values; undefined when the first page is not readable with the lookup (`firstPageReadable`).
 * Reads whose values are all numbers (a box) are batched instead (area-batches.ts); this is the statement of the others.
 */
export function spaceWithAreaStatement(id: string, catalogId: string, query: FeatureQuery): { statement: Prepared; values: unknown[]; size: number } | undefined {
  if (!firstPageReadable(query)) return undefined;
  const size = Math.min(query.limit, FIRST_AREA_PAGE);
  const params = new SqlParams();
  params.add(id);
  params.add(catalogId);
  params.add(size);
  const where = compileQuery(query, params);
  // The features are read only where the catalog holds them too (`location = $2`); elsewhere the probe is empty. The
  // space number is a scalar subquery, so that it is a parameter of the GiST index scan: joined to `s` it was only a
  // filter after the scan, which then read the area's features of every space.
  const text = `WITH s AS MATERIALIZED (
                  SELECT s.sid, s.id, s.definition, s.location, c.content_updated_at, c.revision
                    FROM spaces s LEFT JOIN space_counters c ON c.sid = s.sid WHERE s.id = $1 LIMIT 1),
                probe AS MATERIALIZED (
                  SELECT f.seq, f.feature FROM features f
                   WHERE f.sid = (SELECT sid FROM s) AND (SELECT location FROM s) = $2 AND ${where} LIMIT ${PROBE('$3')})
                SELECT s.sid, s.id, s.definition, s.location, s.content_updated_at, s.revision, p.text, p.count, p.last, p.dense
                  FROM s CROSS JOIN (SELECT string_agg(p.feature, ','), count(*)::int, max(p.seq), ${DENSE('$3')} FROM (${PROBED('$3')}) p)
                       AS p(text, count, last, dense)`;
  return { statement: prepared(text), values: params.values, size };
}

/** The page of a row, when the probe read the whole start of the area: not dense, and the features held in the catalog's database. */
export function firstPageOf(row: SpaceAreaRow, catalogId: string, size: number, limit: number): { page: FeatureTextPage; complete: boolean } | undefined {
  const [, , , location, , , text, count, lastSeq, dense] = row;
  if (location !== catalogId || dense) return undefined;
  return { page: { text: text ?? '', count, lastSeq: lastSeq ?? 0 }, complete: count < size || count >= limit };
}
