// Space statistics (API.md 5.9) on SQLite: aggregates over the whole space, or a stride sample of a large one read a part at a time.
import type Database from 'better-sqlite3';
import { propertyStatistics, type SampledFeature, samplePositions, sampleStatistics } from '../shared/space-statistics.js';
import { StorageError } from '../storage-error.js';
import type { SpaceStatistics, StatisticsOptions } from '../storage.js';

const jsonTypeToDatatype: Record<string, string | undefined> = {
  text: 'string', integer: 'number', real: 'number', true: 'boolean', false: 'boolean', object: 'object', array: 'array',
};

interface PropertyRow { key: string; type: string; n: number }

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

/** Sample positions per statement: each statement holds the event loop for a few tens of milliseconds at most. */
const POSITIONS_PER_STATEMENT = 2500;

type SampleRow = [seq: number, geometryType: string | null, west: number | null, south: number, east: number, north: number, properties: string];

/**
 * The sampled features: the first feature at or after each position (an index lookup each:
 * `features_by_space` holds (sid, seq)), each once, with its indexed columns and its properties. Between
 * statements other requests get their turn, so the figures may see writes made meanwhile: they are
 * estimates anyway.
 */
async function sampleOf(db: Database.Database, sid: number): Promise<SampledFeature[]> {
  const [first, last] = ['', 'DESC'].map((order) => db.prepare(`SELECT seq FROM features WHERE sid = ? ORDER BY seq ${order} LIMIT 1`)
    .pluck().get(sid) as number | undefined);
  if (first === undefined || last === undefined) return [];
  const statement = db.prepare(
    `SELECT f.seq, f.geometry_type, f.min_x, f.min_y, f.max_x, f.max_y, json_extract(f.json, '$.properties')
       FROM (SELECT DISTINCT (SELECT seq FROM features WHERE sid = ? AND seq >= j.value ORDER BY seq LIMIT 1) AS seq FROM json_each(?) j) s
       CROSS JOIN features f ON f.seq = s.seq`).raw(true);
  const positions = samplePositions(first, last);
  const sample = new Map<number, SampledFeature>();
  for (let start = 0; start < positions.length; start += POSITIONS_PER_STATEMENT) {
    if (start > 0) await new Promise((resolve) => setImmediate(resolve));
    const rows = statement.all(sid, JSON.stringify(positions.slice(start, start + POSITIONS_PER_STATEMENT))) as SampleRow[];
    for (const [seq, geometryType, west, south, east, north, properties] of rows) {
      sample.set(seq, { geometryType, bbox: west === null ? null : [west, south, east, north], properties: JSON.parse(properties) as Record<string, unknown> });
    }
  }
  return [...sample.values()];
}

export async function readStatistics(db: Database.Database, sid: number, options: StatisticsOptions): Promise<SpaceStatistics> {
  const space = db.prepare('SELECT feature_count AS count, data_size AS size FROM spaces WHERE sid = ?')
    .get(sid) as { count: number; size: number } | undefined;
  if (!space) throw new StorageError('spaceGone');
  const estimated = space.count > options.exactUpTo;
  return {
    count: space.count,
    dataSize: space.size,
    ...(estimated ? sampleStatistics(await sampleOf(db, sid), space.count) : exactStatistics(db, sid)),
    estimated,
  };
}
