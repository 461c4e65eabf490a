// What both engines share for space statistics (API.md 5.9): the stride sample of a large space and the folding of sampled counts.
import { NS } from '../../core/namespace-key.js';
import type { BBox } from '../../geo/bbox.js';
import type { PropertyStatistic, SpaceStatistics, TagCount } from '../storage.js';

/** Most frequent first, then by key: the order of tag and property statistics. */
export const byCountThenKey = (a: TagCount, b: TagCount) => b.count - a.count || (a.key < b.key ? -1 : 1);

/** A large space is estimated from at most this many features, spread over all of it. */
export const STATISTICS_SAMPLE = 10_000;

/** A fixed pseudo-random fraction in [0, 1) for each index (a 32-bit integer hash): repeated calls sample alike. */
function jitter(index: number): number {
  let x = Math.imul(index + 1, 0x9e3779b1);
  x ^= x >>> 15;
  x = Math.imul(x, 0x85ebca77);
  x ^= x >>> 13;
  return (x >>> 0) / 2 ** 32;
}

/**
 * The sample is read as runs of this many features in insertion order. A feature picked alone costs a page read of
 * its own, and on a space larger than the database's cache each is a miss: 10,000 single picks in a 10,000,000-feature
 * space made /statistics take 107-350 ms on SQLite. Neighbours in insertion order share pages, so 200 runs of 50 read
 * about 20 times fewer pages (docs/decisions.md, "Statistics").
 */
export const SAMPLE_RUN = 50;

/**
 * Where the runs of the sample start, spread over the space from its first to its last feature: one run at a
 * pseudo-random place in each of `size / run` equal stretches, inside its stretch. Each engine reads the `run`
 * features at or after each start (an index range), so the sample covers old and new features alike, where the
 * first rows alone would show only what was written first; the jitter keeps the runs from meeting data that repeats
 * with the stretch, and a run covers every residue of shorter periods. A space no longer than the sample is read
 * whole. Starts inside a gap left by deletes land on the feature after it; engines keep each sampled feature once.
 */
export function sampleRuns(firstSeq: number, lastSeq: number, size = STATISTICS_SAMPLE, run = SAMPLE_RUN): number[] {
  const span = lastSeq - firstSeq + 1;
  if (span <= size) return Array.from({ length: Math.ceil(span / run) }, (_, i) => firstSeq + i * run);
  const runs = Math.floor(size / run);
  const stretch = span / runs;
  return Array.from({ length: runs }, (_, i) => firstSeq + Math.floor(i * stretch + jitter(i) * (stretch - run)));
}

/** How many features have top-level property `key` with a value of `datatype` (undefined for null). */
export interface PropertyTypeCount { key: string; datatype: string | undefined; n: number }

/** One entry per key with its most common datatype and its count scaled by `scale`, most frequent keys first. */
export function propertyStatistics(rows: PropertyTypeCount[], scale: number): PropertyStatistic[] {
  const byKey = new Map<string, { count: number; typeCounts: Map<string, number> }>();
  for (const row of rows) {
    const entry = byKey.get(row.key) ?? { count: 0, typeCounts: new Map<string, number>() };
    entry.count += row.n;
    if (row.datatype) entry.typeCounts.set(row.datatype, (entry.typeCounts.get(row.datatype) ?? 0) + row.n);
    byKey.set(row.key, entry);
  }
  return [...byKey].map(([key, { count, typeCounts }]) => {
    const datatype = [...typeCounts].sort((a, b) => b[1] - a[1])[0]?.[0];
    const statistic: PropertyStatistic = { key, count: Math.round(count * scale) };
    if (datatype) statistic.datatype = datatype;
    return statistic;
  }).sort(byCountThenKey);
}

/** One sampled feature as an engine reads it: its indexed columns and its properties (namespace included). */
export interface SampledFeature {
  geometryType: string | null;
  bbox: BBox | null;
  properties: Record<string, unknown>;
}

function datatypeOf(value: unknown): string | undefined {
  if (value === null) return undefined;
  if (Array.isArray(value)) return 'array';
  const type = typeof value;
  return type === 'string' || type === 'number' || type === 'boolean' || type === 'object' ? type : undefined;
}

/**
 * The sampled members of the statistics of a space of `count` features, from one pass over the sample:
 * both engines fold alike, so the same sample gives the same figures.
 */
export function sampleStatistics(sample: SampledFeature[], count: number): Pick<SpaceStatistics, 'bbox' | 'geometryTypes' | 'tags' | 'properties'> {
  let bbox: BBox | null = null;
  const geometryTypes = new Set<string>();
  const tags = new Map<string, number>();
  const properties: PropertyTypeCount[] = [];
  const propertyIndex = new Map<string, number>();
  for (const feature of sample) {
    if (feature.geometryType !== null) geometryTypes.add(feature.geometryType);
    if (feature.bbox) {
      const [west, south, east, north] = feature.bbox;
      bbox = bbox ? [Math.min(bbox[0], west), Math.min(bbox[1], south), Math.max(bbox[2], east), Math.max(bbox[3], north)] : [west, south, east, north];
    }
    for (const [key, value] of Object.entries(feature.properties)) {
      if (key === NS) {
        for (const tag of new Set((value as { tags?: string[] }).tags ?? [])) tags.set(tag, (tags.get(tag) ?? 0) + 1);
        continue;
      }
      const datatype = datatypeOf(value);
      const slot = `${datatype}:${key}`;
      const index = propertyIndex.get(slot);
      if (index === undefined) {
        propertyIndex.set(slot, properties.length);
        properties.push({ key, datatype, n: 1 });
      } else {
        properties[index].n++;
      }
    }
  }
  return scaledSampleStatistics({ sampled: sample.length, bbox, geometryTypes, tags, properties }, count);
}

/**
 * What a sample adds up to before it is scaled to the space: an engine that counts in its database (PostgreSQL)
 * hands these over instead of the sampled features.
 */
export interface SampleCounts {
  /** Features in the sample. */
  sampled: number;
  bbox: BBox | null;
  geometryTypes: Iterable<string>;
  /** Sampled features per tag. */
  tags: Iterable<[string, number]>;
  /** In the order of each key and datatype's first sampled feature: of a key's datatypes with equal counts, the first seen wins. */
  properties: PropertyTypeCount[];
}

/** The sampled members of the statistics of a space of `count` features, from what its sample adds up to. */
export function scaledSampleStatistics(counts: SampleCounts, count: number): Pick<SpaceStatistics, 'bbox' | 'geometryTypes' | 'tags' | 'properties'> {
  // What a count in the sample stands for in the whole space.
  const scale = counts.sampled === 0 ? 1 : count / counts.sampled;
  return {
    bbox: counts.bbox,
    geometryTypes: [...counts.geometryTypes].sort(),
    tags: [...counts.tags].map(([key, n]) => ({ key, count: Math.round(n * scale) })).sort(byCountThenKey),
    properties: propertyStatistics(counts.properties, scale),
  };
}
