// Features in PostgreSQL: one transaction per write with the space's counters locked, bulk statements, keyset-paged streamed reads.
import { hubError } from '../../core/errors.js';
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage } from '../../core/feature-query.js';
import type { FeatureStore, FeatureWrite, SpaceStatistics, WritePlanner } from '../storage.js';
import type { Client, Prepared } from './database.js';
import { compileFilter, isEmptyFilter, SqlParams } from './filter-sql.js';
import type { Locations } from './locations.js';
import { cannotExist, jsonbStandIn } from './nul-stand-in.js';
import { readStatistics } from './statistics.js';

/** Rows fetched per statement while streaming; the next page is fetched while the current one is consumed. */
const PAGE_SIZE = 1000;
/** Bounds of one bulk statement: large writes become a few big statements, never one per feature. */
const CHUNK_ROWS = 10_000;
const CHUNK_CHARS = 16 * 1024 * 1024;

/**
 * The rows of a bulk statement, zipped from parallel parameters. The feature texts travel as one JSON
 * array, which needs no escaping in Node; `json_array_elements` hands back each element's text exactly
 * as sent. Each text is parsed to jsonb once (`OFFSET 0` keeps the planner from inlining it per use),
 * or its stand-in where jsonb cannot hold the text as it is (see `jsonbStandIn`).
 */
const ROWS = (key: string, keyType: string) => `
  ROWS FROM (json_array_elements($2::json), unnest($3::${keyType}[]), unnest($4::text[]), jsonb_array_elements($5::jsonb), unnest($6::text[]))
    WITH ORDINALITY AS u(feature, ${key}, geometry_type, tags, stand_in, ord),
  LATERAL (SELECT coalesce(u.stand_in, u.feature::text)::jsonb AS parsed OFFSET 0) p`;

/** Geometries are stored 2D: spatial predicates are planar on lon/lat, and the typed column takes one dimensionality. */
const GEOMETRY = `CASE WHEN u.geometry_type IS NOT NULL THEN ST_Force2D(ST_GeomFromGeoJSON(p.parsed -> 'geometry')) END`;
const TAGS = 'ARRAY(SELECT jsonb_array_elements_text(u.tags))';

const INSERT = `
  INSERT INTO features (sid, id, feature, properties, geom, geometry_type, tags)
  SELECT $1, u.id, u.feature::text, p.parsed -> 'properties', ${GEOMETRY}, u.geometry_type, ${TAGS}
    FROM ${ROWS('id', 'text')}
   ORDER BY u.ord`;

const UPDATE = `
  UPDATE features f
     SET feature = u.feature::text, properties = p.parsed -> 'properties', geom = ${GEOMETRY},
         geometry_type = u.geometry_type, tags = ${TAGS}
    FROM ${ROWS('seq', 'bigint')}
   WHERE f.sid = $1 AND f.seq = u.seq`;

const UPDATE_COUNTERS: Prepared = {
  name: 'update_counters',
  text: `UPDATE space_contents SET feature_count = feature_count + $2, data_size = data_size + $3,
                revision = revision + 1, content_updated_at = $4
          WHERE sid = $1
         RETURNING feature_count`,
};
const LOCK_SPACE: Prepared = { name: 'lock_space', text: 'SELECT 1 FROM space_contents WHERE sid = $1 FOR UPDATE' };
const COUNT: Prepared = { name: 'count_features', text: 'SELECT feature_count AS n FROM space_contents WHERE sid = $1' };

/**
 * The planner knows how many rows a space has only from the table statistics. A space that grew far
 * beyond them looks small, and keyset pages get a bitmap scan plus a sort of everything after the
 * handle instead of the ordered primary-key scan: quadratic over an iterate. So the statistics are
 * refreshed when a space reaches 10,000 features and each time it doubles from there (autovacuum
 * alone waits for 10% of the whole table to change).
 */
const ANALYZE_FROM = 10_000;

function growthLevel(count: number): number {
  return count < ANALYZE_FROM ? -1 : Math.floor(Math.log2(count / ANALYZE_FROM));
}

interface ExistingRow { seq: number; json: string }

/** Consecutive slices of at most CHUNK_ROWS rows and about CHUNK_CHARS characters of feature text. */
function chunks<T>(rows: T[], textOf: (row: T) => string): T[][] {
  const result: T[][] = [];
  let current: T[] = [];
  let chars = 0;
  for (const row of rows) {
    if (current.length > 0 && (current.length >= CHUNK_ROWS || chars >= CHUNK_CHARS)) {
      result.push(current);
      current = [];
      chars = 0;
    }
    current.push(row);
    chars += textOf(row).length;
  }
  if (current.length > 0) result.push(current);
  return result;
}

/** The parallel parameters $2..$6 of ROWS for some features, keyed by id or by seq. */
function rowParameters(features: FeatureWrite[], keys: Array<string | number>): unknown[] {
  return [
    `[${features.map((feature) => feature.json).join(',')}]`,
    keys,
    features.map((feature) => feature.geometryType),
    JSON.stringify(features.map((feature) => feature.tags)),
    features.map((feature) => jsonbStandIn(feature.json)),
  ];
}

/** Locks the counters of a space for the rest of the transaction: writes to one space take turns, so their seqs commit in order. */
async function lockSpace(client: Client, sid: number): Promise<void> {
  const { rowCount } = await client.query({ ...LOCK_SPACE, values: [sid] });
  if (rowCount === 0) throw hubError('spaceOfFeaturesNotFound');
}

export class PostgresFeatureStore implements FeatureStore {
  constructor(private readonly locations: Locations) {}

  async write<T>(spaceId: string, ids: readonly string[], planner: WritePlanner<T>): Promise<T> {
    const { sid, db } = await this.locations.ofSpace(spaceId);
    let grown = false;
    const outcome = await db.transaction(async (client) => {
      await lockSpace(client, sid);
      const stored = new Map<string, ExistingRow>();
      const lookup = ids.filter((id) => !cannotExist(id));
      if (lookup.length > 0) {
        const { rows } = await client.query<[number, string, string]>({
          text: 'SELECT seq, id, feature FROM features WHERE sid = $1 AND id = ANY($2::text[]) FOR UPDATE',
          values: [sid, lookup],
          rowMode: 'array',
        });
        for (const [seq, id, json] of rows) stored.set(id, { seq, json });
      }
      const existing = new Map<string, string>();
      for (const [id, row] of stored) existing.set(id, row.json);

      const { plan, result } = planner(existing);
      const inserts: FeatureWrite[] = [];
      const updates: Array<{ seq: number; feature: FeatureWrite }> = [];
      const deletes: number[] = [];
      let sizeDelta = 0;
      for (const feature of plan.upserts) {
        const before = stored.get(feature.id);
        if (before) updates.push({ seq: before.seq, feature });
        else inserts.push(feature);
        sizeDelta += feature.json.length - (before?.json.length ?? 0);
      }
      for (const id of plan.deletes) {
        const before = stored.get(id);
        if (!before) continue;
        deletes.push(before.seq);
        sizeDelta -= before.json.length;
      }

      for (const chunk of chunks(inserts, (feature) => feature.json)) {
        await client.query(INSERT, [sid, ...rowParameters(chunk, chunk.map((feature) => feature.id))]);
      }
      for (const chunk of chunks(updates, (update) => update.feature.json)) {
        await client.query(UPDATE, [sid, ...rowParameters(chunk.map((update) => update.feature), chunk.map((update) => update.seq))]);
      }
      if (deletes.length > 0) await client.query('DELETE FROM features WHERE sid = $1 AND seq = ANY($2::bigint[])', [sid, deletes]);
      if (plan.upserts.length > 0 || plan.deletes.length > 0) {
        const countDelta = inserts.length - deletes.length;
        const { rows: [counters] } = await client.query<{ feature_count: number }>(
          { ...UPDATE_COUNTERS, values: [sid, countDelta, sizeDelta, plan.timestamp] });
        grown = growthLevel(counters.feature_count) > growthLevel(counters.feature_count - countDelta);
      }
      return result;
    });
    // After the commit and without waiting for it: ANALYZE only samples, but takes a moment on a big table.
    if (grown) db.query('ANALYZE features').catch(() => {});
    return outcome;
  }

  async deleteMatching(spaceId: string, filter: FeatureFilter): Promise<number> {
    const { sid, db } = await this.locations.ofSpace(spaceId);
    return db.transaction(async (client) => {
      await lockSpace(client, sid);
      const params = new SqlParams();
      params.add(sid);
      const where = compileFilter(filter, params);
      // char_length counts characters as SQLite's length() does for the same counter.
      const { rows: [victims] } = await client.query<{ count: number; size: number }>(
        `WITH victims AS (DELETE FROM features f WHERE f.sid = $1 AND ${where} RETURNING char_length(f.feature) AS size)
         SELECT count(*) AS count, coalesce(sum(size), 0)::bigint AS size FROM victims`, params.values);
      if (victims.count > 0) await client.query({ ...UPDATE_COUNTERS, values: [sid, -victims.count, -victims.size, Date.now()] });
      return victims.count;
    });
  }

  async *query(query: FeatureQuery): AsyncIterable<FeatureRow[]> {
    const shape = (rows: unknown[][]): FeatureRow[] => (rows as Array<[number, string]>).map(([seq, json]) => ({ seq, json }));
    const measure = (rows: FeatureRow[]) => ({ count: rows.length, lastSeq: rows[rows.length - 1]?.seq ?? 0 });
    yield* this.read(query, { name: 'features_by_id', outer: (inner) => inner, shape, measure });
  }

  /**
   * PostgreSQL joins each page with string_agg, so Node receives one string per page instead of one per
   * feature. The aggregate takes the rows in the order of its sorted subquery, as the PostgreSQL manual
   * describes for aggregates ("supplying the input values from a sorted subquery"); an ORDER BY inside
   * string_agg would sort every page a second time (PostgreSQL 15 does not skip presorted input). The
   * insertion-order tests of both engines hold this to account.
   */
  async *queryText(query: FeatureQuery): AsyncIterable<FeatureTextPage> {
    const shape = ([row]: unknown[][]): FeatureTextPage => ({
      text: (row?.[0] as string | null) ?? '', count: Number(row?.[1] ?? 0), lastSeq: Number(row?.[2] ?? 0),
    });
    yield* this.read(query, {
      name: 'feature_text_by_id',
      outer: (inner) => `SELECT string_agg(p.feature, ','), count(*)::int, max(p.seq) FROM (${inner}) p`,
      shape,
      measure: (page) => page,
    });
  }

  /**
   * The by-id lookup, or keyset pages over insertion order with the next page fetched while the current
   * one streams. The inner SELECT yields `seq, feature` in result order; `outer` may
   * wrap it, and `shape` turns the rows of one statement into a page.
   */
  private async *read<T>(query: FeatureQuery, how: {
    name: string;
    outer: (inner: string) => string;
    shape: (rows: unknown[][]) => T;
    measure: (page: T) => { count: number; lastSeq: number };
  }): AsyncIterable<T> {
    const { sid, db } = await this.locations.ofSpace(query.spaceId);
    const params = new SqlParams();
    params.add(sid);
    if (query.ids) {
      params.add(query.ids.filter((id) => !cannotExist(id)));
      params.add(query.limit);
      const where = compileFilter(query, params);
      const sql = how.outer(`SELECT f.seq, f.feature FROM unnest($2::text[]) WITH ORDINALITY AS u(id, ord)
                     JOIN features f ON f.sid = $1 AND f.id = u.id
                    WHERE ${where} ORDER BY u.ord LIMIT $3`);
      // Looking ids up one by one is the right plan whatever the values, so without a filter it is prepared once.
      const page = how.shape(await db.queryArrays(isEmptyFilter(query) ? { name: how.name, text: sql } : sql, params.values));
      if (how.measure(page).count > 0) yield page;
      return;
    }
    params.add(0);
    params.add(0);
    const sql = how.outer(`SELECT f.seq, f.feature FROM features f
                  WHERE f.sid = $1 AND f.seq > $2 AND ${compileFilter(query, params)} ORDER BY f.seq LIMIT $3`);
    const fetchPage = async (after: number, size: number): Promise<T> => {
      const values = [...params.values];
      values[1] = after;
      values[2] = size;
      return how.shape(await db.queryArrays(sql, values));
    };
    let remaining = query.limit;
    let size = Math.min(PAGE_SIZE, remaining);
    let pending: Promise<T> | undefined = fetchPage(query.afterSeq ?? 0, size);
    try {
      while (pending) {
        const page: T = await pending;
        const { count, lastSeq } = how.measure(page);
        remaining -= count;
        pending = undefined;
        if (count === size && remaining > 0) {
          size = Math.min(PAGE_SIZE, remaining);
          pending = fetchPage(lastSeq, size);
        }
        if (count > 0) yield page;
      }
    } finally {
      // A reader that stops early leaves a prefetched page nobody awaits.
      pending?.catch(() => {});
    }
  }

  async count(spaceId: string, filter: FeatureFilter): Promise<number> {
    const { sid, db } = await this.locations.ofSpace(spaceId);
    if (isEmptyFilter(filter)) {
      const [row] = await db.query<{ n: number }>(COUNT, [sid]);
      return row?.n ?? 0;
    }
    const params = new SqlParams();
    params.add(sid);
    const where = compileFilter(filter, params);
    const [row] = await db.query<{ n: number }>(`SELECT count(*) AS n FROM features f WHERE f.sid = $1 AND ${where}`, params.values);
    return row.n;
  }

  async statistics(spaceId: string): Promise<SpaceStatistics> {
    const { sid, db } = await this.locations.ofSpace(spaceId);
    return readStatistics(db, sid);
  }
}
