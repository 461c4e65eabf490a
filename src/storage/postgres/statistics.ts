// Space statistics (API.md 5.9) on PostgreSQL, matching the SQLite engine's figures: aggregates over the whole space, or one read of a sample of a large one in runs.
import { NS } from '../../core/namespace-key.js';
import { propertyStatistics, SAMPLE_RUN, type SampledFeature, sampleRuns, sampleStatistics } from '../shared/space-statistics.js';
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

/**
 * The sampled features in one statement: SAMPLE_RUN features at or after each run's start (a primary-key
 * range each), each once, with its geometry type, its box and its properties.
 */
async function sampleOf(db: Database, sid: number): Promise<SampledFeature[]> {
  const [range] = await db.query<{ first: number | null; last: number | null }>(
    `SELECT (SELECT seq FROM features WHERE sid = $1 ORDER BY seq LIMIT 1) AS first,
            (SELECT seq FROM features WHERE sid = $1 ORDER BY seq DESC LIMIT 1) AS last`, [sid]);
  if (range.first === null || range.last === null) return [];
  const rows = await db.query<{ type: string | null; w: number | null; s: number; e: number; n: number; properties: Record<string, unknown>; tags: string[] }>(
    `SELECT DISTINCT ON (s.seq) s.geometry_type AS type, ST_XMin(s.geom) AS w, ST_YMin(s.geom) AS s, ST_XMax(s.geom) AS e,
            ST_YMax(s.geom) AS n, s.properties, s.tags
       FROM unnest($2::bigint[]) AS p(at)
       CROSS JOIN LATERAL (SELECT seq, geometry_type, geom, properties, tags FROM features WHERE sid = $1 AND seq >= p.at ORDER BY seq LIMIT ${SAMPLE_RUN}) s
      ORDER BY s.seq`,
    [sid, sampleRuns(range.first, range.last)]);
  // The properties column holds the user properties only (feature-rows.ts); the namespace's tags are their own column.
  return rows.map((row) => ({
    geometryType: row.type, bbox: row.w === null ? null : [row.w, row.s, row.e, row.n], properties: { ...row.properties, [NS]: { tags: row.tags } },
  }));
}

export async function readStatistics(db: Database, sid: number, options: StatisticsOptions): Promise<SpaceStatistics> {
  const [space] = await db.query<{ count: number; size: number }>(
    'SELECT feature_count AS count, data_size AS size FROM space_counters WHERE sid = $1', [sid]);
  if (!space) throw new StorageError('spaceGone');
  const estimated = space.count > options.exactUpTo;
  return {
    count: space.count,
    dataSize: space.size,
    ...(estimated ? sampleStatistics(await sampleOf(db, sid), space.count) : await exactStatistics(db, sid)),
    estimated,
  };
}
