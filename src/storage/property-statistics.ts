// Folds per-key, per-type property counts into the `properties` statistics both engines report (API.md 5.9).
import type { PropertyStatistic } from './storage.js';

/** Property statistics read at most this many features; larger spaces get scaled, estimated counts. */
export const PROPERTY_SAMPLE = 10000;

/** How many sampled features have top-level property `key` with a value of `datatype` (undefined for null). */
export interface PropertyTypeCount { key: string; datatype: string | undefined; n: number }

/** One entry per key with its most common datatype, most frequent keys first. */
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
  }).sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1));
}
