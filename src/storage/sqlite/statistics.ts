// Space statistics (API.md 5.9) computed by SQLite aggregates over one space.
import type Database from 'better-sqlite3';
import type { PropertyStatistic, SpaceStatistics } from '../storage.js';

/** Property statistics read at most this many features; larger spaces get scaled, estimated counts. */
const PROPERTY_SAMPLE = 10000;

const jsonTypeToDatatype: Record<string, string | undefined> = {
  text: 'string', integer: 'number', real: 'number', true: 'boolean', false: 'boolean', object: 'object', array: 'array',
};

interface PropertyRow { key: string; type: string; n: number }

function propertyStatistics(rows: PropertyRow[], scale: number): PropertyStatistic[] {
  const byKey = new Map<string, { count: number; typeCounts: Map<string, number> }>();
  for (const row of rows) {
    const entry = byKey.get(row.key) ?? { count: 0, typeCounts: new Map<string, number>() };
    entry.count += row.n;
    const datatype = jsonTypeToDatatype[row.type];
    if (datatype) entry.typeCounts.set(datatype, (entry.typeCounts.get(datatype) ?? 0) + row.n);
    byKey.set(row.key, entry);
  }
  return [...byKey].map(([key, { count, typeCounts }]) => {
    const datatype = [...typeCounts].sort((a, b) => b[1] - a[1])[0]?.[0];
    const statistic: PropertyStatistic = { key, count: Math.round(count * scale) };
    if (datatype) statistic.datatype = datatype;
    return statistic;
  }).sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
}

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
    properties: propertyStatistics(propertyRows, sampled ? space.count / PROPERTY_SAMPLE : 1),
    propertiesEstimated: sampled,
  };
}
