// Space statistics (API.md 5.9) on SQLite: aggregates over the whole space, or one read of a stride sample of a large one.
import type Database from 'better-sqlite3';
import { propertyStatistics, type SampledFeature, samplePositions, sampleStatistics } from '../shared/space-statistics.js';
import type { SpaceStatistics, StatisticsOptions } from '../storage.js';

const jsonTypeToDatatype: Record<string, string | undefined> = {
  text: 'string', integer: 'number', real: 'number', true: 'boolean', false: 'boolean', object: 'object', array: 'array',
};

interface PropertyRow { key: string; type: string; n: number }

type SampleRow = [geometryType: string | null, west: number | null, south: number, east: number, north: number, properties: string];

function exactStatistics(db: Database.Database, sid: number): Pick<SpaceStatistics, 'bbox' | 'geometryTypes' | 'tags' | 'properties'> {
  const extent = db.prepare(
    'SELECT min(min_x) AS w, min(min_y) AS s, max(max_x) AS e, max(max_y) AS n FROM features WHERE sid = ?')
    .get(sid) as { w: number | null; s: number; e: number; n: number };
  const geometryTypes = db.prepare(
    'SELECT DISTINCT geometry_type FROM features WHERE sid = ? AND geometry_type IS NOT NULL ORDER BY 1')
    .pluck().all(sid) as string[];
  const tags = db.prepare(
    'SELECT tag AS key, count(*) AS count FROM feature_tags WHERE sid = ? GROUP BY tag ORDER BY count DESC, tag')
    .all(sid) as Array<{ key: string; count: number }>;
  const propertyRows = db.prepare(
    `SELECT p.key AS key, p.type AS type, count(*) AS n FROM features f, json_each(f.json, '$.properties') p
      WHERE f.sid = ? AND p.key != '@ns:com:here:xyz' GROUP BY p.key, p.type`)
    .all(sid) as PropertyRow[];
  return {
    bbox: extent.w === null ? null : [extent.w, extent.s, extent.e, extent.n],
    geometryTypes,
    tags,
    properties: propertyStatistics(propertyRows.map((row) => ({ key: row.key, datatype: jsonTypeToDatatype[row.type], n: row.n })), 1),
  };
}

/**
 * The sampled features in one statement: the first feature at or after each position (an index lookup
 * each: `features_by_space` holds (sid, seq)), each once, with its indexed columns and its properties.
 */
function sampleOf(db: Database.Database, sid: number): SampledFeature[] {
  const [first, last] = ['', 'DESC'].map((order) => db.prepare(`SELECT seq FROM features WHERE sid = ? ORDER BY seq ${order} LIMIT 1`)
    .pluck().get(sid) as number | undefined);
  if (first === undefined || last === undefined) return [];
  const rows = db.prepare(
    `SELECT f.geometry_type, f.min_x, f.min_y, f.max_x, f.max_y, json_extract(f.json, '$.properties')
       FROM (SELECT DISTINCT (SELECT seq FROM features WHERE sid = ? AND seq >= j.value ORDER BY seq LIMIT 1) AS seq FROM json_each(?) j) s
       CROSS JOIN features f ON f.seq = s.seq`)
    .raw(true).all(sid, JSON.stringify(samplePositions(first, last))) as SampleRow[];
  return rows.map(([geometryType, west, south, east, north, properties]) => ({
    geometryType,
    bbox: west === null ? null : [west, south, east, north],
    properties: JSON.parse(properties) as Record<string, unknown>,
  }));
}

/** One read transaction, so the counters and the figures see the same features. */
export function readStatistics(db: Database.Database, sid: number, options: StatisticsOptions): SpaceStatistics {
  return db.transaction((): SpaceStatistics => {
    const space = db.prepare('SELECT feature_count AS count, data_size AS size FROM spaces WHERE sid = ?')
      .get(sid) as { count: number; size: number };
    const estimated = space.count > options.exactUpTo;
    return {
      count: space.count,
      dataSize: space.size,
      ...(estimated ? sampleStatistics(sampleOf(db, sid), space.count) : exactStatistics(db, sid)),
      estimated,
    };
  })();
}
