// Space statistics (API.md 5.9) on PostgreSQL, matching the SQLite engine's figures: aggregates over the whole space, or over a sample of a large one in runs.
import { NS } from '../../core/namespace-key.js';
import { propertyStatistics, SAMPLE_RUN, type SampleCounts, sampleRuns, scaledSampleStatistics } from '../shared/space-statistics.js';
import { StorageError } from '../storage-error.js';
import type { SpaceStatistics, StatisticsOptions } from '../storage.js';
import type { Database } from './database.js';

const jsonbTypeToDatatype: Record<string, string | undefined> = {
  string: 'string', number: 'number', boolean: 'boolean', object: 'object', array: 'array',
};

interface PropertyRow { key: string; type: string; n: number }

async function exactStatistics(db: Database, sid: number): Promise<Pick<SpaceStatistics, 'bbox' | 'geometryTypes' | 'tags' | 'properties'>> {
  const [[extent], geometryTypes, tags, propertyRows] = await Promise.all([
    db.query<{ w: number | null; s: number; e: number; n: number }>(
      `SELECT ST_XMin(x) AS w, ST_YMin(x) AS s, ST_XMax(x) AS e, ST_YMax(x) AS n
         FROM (SELECT ST_Extent(geom) AS x FROM features WHERE sid = $1) extent`, [sid]),
    db.query<{ type: string }>(
      'SELECT DISTINCT geometry_type AS type FROM features WHERE sid = $1 AND geometry_type IS NOT NULL ORDER BY 1', [sid]),
    db.query<{ key: string; count: number }>(
      `SELECT tag AS key, count(*) AS count FROM features f, unnest(f.tags) tag
        WHERE f.sid = $1 GROUP BY tag ORDER BY count DESC, tag`, [sid]),
    db.query<PropertyRow>(
      `SELECT p.key AS key, jsonb_typeof(p.value) AS type, count(*)::int AS n FROM features f, jsonb_each(f.properties) p
        WHERE f.sid = $1 AND p.key <> '@ns:com:here:xyz' GROUP BY 1, 2`, [sid]),
  ]);
  return {
    bbox: extent.w === null ? null : [extent.w, extent.s, extent.e, extent.n],
    geometryTypes: geometryTypes.map((row) => row.type),
    tags,
    properties: propertyStatistics(propertyRows.map((row) => ({ key: row.key, datatype: jsonbTypeToDatatype[row.type], n: row.n })), 1),
  };
}

interface SampleRow {
  sampled: number;
  w: number | null;
  s: number | null;
  e: number | null;
  n: number | null;
  types: string[] | null;
  tags: [string[], number][] | null;
  properties: [string, string, number][] | null;
}

/**
 * What the sample adds up to, in one statement: SAMPLE_RUN features at or after each run's start (a primary-key
 * range each), each once, counted in the database. The hub used to receive the 10,000 sampled rows and parse every
 * row's properties into objects to count their keys, which was most of a call's time (docs/decisions.md, "`/statistics`
 * on a cold PostgreSQL space"). The figures are those sampleStatistics folds from the same features: property keys and
 * datatypes in the order of their first sampled feature, each tag once per feature.
 *
 * Each run stops before the next run's start. That reads the same features as runs that overlap and are merged
 * afterwards (what a run would read past the next start are the next run's first features), without sorting the
 * sample to merge it.
 */
async function sampleOf(db: Database, sid: number): Promise<SampleCounts> {
  const [range] = await db.query<{ first: number | null; last: number | null }>(
    `SELECT (SELECT seq FROM features WHERE sid = $1 ORDER BY seq LIMIT 1) AS first,
            (SELECT seq FROM features WHERE sid = $1 ORDER BY seq DESC LIMIT 1) AS last`, [sid]);
  if (range.first === null || range.last === null) return { sampled: 0, bbox: null, geometryTypes: [], tags: [], properties: [] };
  // The box is taken once per feature (geom::box3d), not once per ST_XMin … ST_YMax; the figures are the same. Tags
  // are counted per distinct tag list, which few features of a space differ in; the lists are split here.
  const [row] = await db.query<SampleRow>(
    `WITH sample AS MATERIALIZED (
       SELECT s.seq, s.geometry_type, s.box, s.properties, s.tags
         FROM (SELECT at, coalesce(lead(at) OVER (ORDER BY at), ${Number.MAX_SAFE_INTEGER}) AS next FROM unnest($2::bigint[]) at) p
         CROSS JOIN LATERAL (SELECT seq, geometry_type, geom::box3d AS box, properties, tags FROM features
                              WHERE sid = $1 AND seq >= p.at AND seq < p.next ORDER BY seq LIMIT ${SAMPLE_RUN}) s),
     extent AS (SELECT min(ST_XMin(box)) AS w, min(ST_YMin(box)) AS s, max(ST_XMax(box)) AS e, max(ST_YMax(box)) AS n FROM sample)
     SELECT (SELECT count(*)::int FROM sample) AS sampled, extent.w, extent.s, extent.e, extent.n,
            (SELECT array_agg(DISTINCT geometry_type) FILTER (WHERE geometry_type IS NOT NULL) FROM sample) AS types,
            (SELECT json_agg(json_build_array(tags, n)) FROM (SELECT tags, count(*)::int AS n FROM sample GROUP BY tags) t) AS tags,
            (SELECT json_agg(json_build_array(key, type, n) ORDER BY first) FROM (
               SELECT key, jsonb_typeof(sample.properties -> key) AS type, count(*)::int AS n, min(sample.seq) AS first
                 FROM sample, jsonb_object_keys(sample.properties) key WHERE key <> '${NS}' GROUP BY 1, 2) t) AS properties
       FROM extent`,
    [sid, sampleRuns(range.first, range.last)]);
  const tags = new Map<string, number>();
  for (const [list, n] of row.tags ?? []) {
    for (const tag of new Set(list)) tags.set(tag, (tags.get(tag) ?? 0) + n);
  }
  return {
    sampled: row.sampled,
    bbox: row.w === null || row.s === null || row.e === null || row.n === null ? null : [row.w, row.s, row.e, row.n],
    geometryTypes: row.types ?? [],
    tags,
    properties: (row.properties ?? []).map(([key, type, n]) => ({ key, datatype: jsonbTypeToDatatype[type], n })),
  };
}

export async function readStatistics(db: Database, sid: number, options: StatisticsOptions): Promise<SpaceStatistics> {
  const [space] = await db.query<{ count: number; size: number }>(
    'SELECT feature_count AS count, data_size AS size FROM space_counters WHERE sid = $1', [sid]);
  if (!space) throw new StorageError('spaceGone');
  const estimated = space.count > options.exactUpTo;
  return {
    count: space.count,
    dataSize: space.size,
    ...(estimated ? scaledSampleStatistics(await sampleOf(db, sid), space.count) : await exactStatistics(db, sid)),
    estimated,
  };
}
