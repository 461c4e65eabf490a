// Space statistics (API.md 5.9) on SQLite: aggregates over the whole space, or a sample of a large one read in runs, a few runs at a time.
import type Database from 'better-sqlite3';
import { propertyStatistics, SAMPLE_RUN, type SampledFeature, sampleRuns, sampleStatistics } from '../shared/space-statistics.js';
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

/** Runs read between two turns of the event loop: a statistics call holds other requests for a few milliseconds at a time. */
const RUNS_PER_TURN = 50;

type SampleRow = [seq: number, geometryType: string | null, west: number | null, south: number, east: number, north: number, properties: string];

/**
 * The sampled features: SAMPLE_RUN features at or after each run's start (an index range over `features_by_space`,
 * which holds (sid, seq)), each once, with its indexed columns and its properties. Between turns other requests are
 * served, so the figures may see writes made meanwhile: they are estimates anyway.
 */
async function sampleOf(db: Database.Database, sid: number): Promise<SampledFeature[]> {
  const [first, last] = ['', 'DESC'].map((order) => db.prepare(`SELECT seq FROM features WHERE sid = ? ORDER BY seq ${order} LIMIT 1`)
    .pluck().get(sid) as number | undefined);
  if (first === undefined || last === undefined) return [];
  const statement = db.prepare<[number, number], SampleRow>(
    `SELECT seq, geometry_type, min_x, min_y, max_x, max_y, json_extract(json, '$.properties')
       FROM features WHERE sid = ? AND seq >= ? ORDER BY seq LIMIT ${SAMPLE_RUN}`).raw(true);
  const starts = sampleRuns(first, last);
  const sample = new Map<number, SampledFeature>();
  for (let run = 0; run < starts.length; run++) {
    if (run > 0 && run % RUNS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
    for (const [seq, geometryType, west, south, east, north, properties] of statement.all(sid, starts[run])) {
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
