// Space statistics (API.md 5.9) computed by SQLite aggregates over one space.
import type Database from 'better-sqlite3';
import { PROPERTY_SAMPLE, propertyStatistics } from '../property-statistics.js';
import type { SpaceStatistics } from '../storage.js';

const jsonTypeToDatatype: Record<string, string | undefined> = {
  text: 'string', integer: 'number', real: 'number', true: 'boolean', false: 'boolean', object: 'object', array: 'array',
};

interface PropertyRow { key: string; type: string; n: number }


export function readStatistics(db: Database.Database, sid: number): SpaceStatistics {
  const space = db.prepare('SELECT feature_count AS count, data_size AS size FROM spaces WHERE sid = ?')
    .get(sid) as { count: number; size: number };
  const extent = db.prepare(
    'SELECT min(min_x) AS w, min(min_y) AS s, max(max_x) AS e, max(max_y) AS n FROM features WHERE sid = ?')
    .get(sid) as { w: number | null; s: number | null; e: number | null; n: number | null };
  const geometryTypes = db.prepare(
    'SELECT DISTINCT geometry_type AS type FROM features WHERE sid = ? AND geometry_type IS NOT NULL ORDER BY 1')
    .pluck().all(sid) as string[];
  const tags = db.prepare(
    'SELECT tag AS key, count(*) AS count FROM feature_tags WHERE sid = ? GROUP BY tag ORDER BY count DESC, tag')
    .all(sid) as Array<{ key: string; count: number }>;
  const propertyRows = db.prepare(
    `SELECT p.key AS key, p.type AS type, count(*) AS n
       FROM (SELECT json FROM features WHERE sid = ? ORDER BY seq LIMIT ?) f, json_each(f.json, '$.properties') p
      WHERE p.key != '@ns:com:here:xyz' GROUP BY p.key, p.type`)
    .all(sid, PROPERTY_SAMPLE) as PropertyRow[];
  const sampled = space.count > PROPERTY_SAMPLE;
  return {
    count: space.count,
    dataSize: space.size,
    bbox: extent.w === null ? null : [extent.w, extent.s as number, extent.e as number, extent.n as number],
    geometryTypes,
    tags,
    properties: propertyStatistics(
      propertyRows.map((row) => ({ key: row.key, datatype: jsonTypeToDatatype[row.type], n: row.n })),
      sampled ? space.count / PROPERTY_SAMPLE : 1),
    propertiesEstimated: sampled,
  };
}
