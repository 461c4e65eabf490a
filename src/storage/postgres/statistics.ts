// Space statistics (API.md 5.9) computed by PostgreSQL aggregates over one space, matching the SQLite engine's figures.
import { PROPERTY_SAMPLE, propertyStatistics } from '../property-statistics.js';
import type { SpaceStatistics } from '../storage.js';
import type { Database } from './database.js';

const jsonbTypeToDatatype: Record<string, string | undefined> = {
  string: 'string', number: 'number', boolean: 'boolean', object: 'object', array: 'array',
};

interface PropertyRow { key: string; type: string; n: number }


export async function readStatistics(db: Database, sid: number): Promise<SpaceStatistics> {
  const [[space], [extent], geometryTypes, tags, propertyRows] = await Promise.all([
    db.query<{ count: number; size: number }>('SELECT feature_count AS count, data_size AS size FROM space_counters WHERE sid = $1', [sid]),
    db.query<{ w: number | null; s: number; e: number; n: number }>(
      `SELECT ST_XMin(x) AS w, ST_YMin(x) AS s, ST_XMax(x) AS e, ST_YMax(x) AS n
         FROM (SELECT ST_Extent(geom) AS x FROM features WHERE sid = $1) extent`, [sid]),
    db.query<{ type: string }>(
      'SELECT DISTINCT geometry_type AS type FROM features WHERE sid = $1 AND geometry_type IS NOT NULL ORDER BY 1', [sid]),
    db.query<{ key: string; count: number }>(
      `SELECT tag AS key, count(*) AS count FROM features f, unnest(f.tags) tag
        WHERE f.sid = $1 GROUP BY tag ORDER BY count DESC, tag`, [sid]),
    db.query<PropertyRow>(
      `SELECT p.key AS key, jsonb_typeof(p.value) AS type, count(*)::int AS n
         FROM (SELECT properties FROM features WHERE sid = $1 ORDER BY seq LIMIT $2) f, jsonb_each(f.properties) p
        WHERE p.key <> '@ns:com:here:xyz' GROUP BY 1, 2`, [sid, PROPERTY_SAMPLE]),
  ]);
  const sampled = space.count > PROPERTY_SAMPLE;
  return {
    count: space.count,
    dataSize: space.size,
    bbox: extent.w === null ? null : [extent.w, extent.s, extent.e, extent.n],
    geometryTypes: geometryTypes.map((row) => row.type),
    tags,
    properties: propertyStatistics(
      propertyRows.map((row) => ({ key: row.key, datatype: jsonbTypeToDatatype[row.type], n: row.n })),
      sampled ? space.count / PROPERTY_SAMPLE : 1),
    propertiesEstimated: sampled,
  };
}
