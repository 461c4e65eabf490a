// Statistics counted over the features a read shows: for what the stored counters do not describe (a space at a version, a layered space).
import type { FeatureRow } from '../../core/feature-query.js';
import { geometryBBox } from '../../geo/bbox.js';
import type { Geometry } from '../../geo/geometry.js';
import { type SampledFeature, sampleStatistics, STATISTICS_SAMPLE } from '../../storage/shared/space-statistics.js';
import type { SpaceStatistics } from '../../storage/storage.js';

function sampledFeature(json: string): SampledFeature {
  const feature = JSON.parse(json) as { geometry?: Geometry | null; properties?: Record<string, unknown> };
  return { geometryType: feature.geometry?.type ?? null, bbox: feature.geometry ? geometryBBox(feature.geometry) : null, properties: feature.properties ?? {} };
}

/**
 * The count and data size exactly (the characters of the stored texts); bbox, geometry types, tags and properties from
 * the first STATISTICS_SAMPLE features, estimated when there are more.
 */
export async function statisticsOfRead(pages: AsyncIterable<FeatureRow[]>): Promise<SpaceStatistics> {
  let count = 0;
  let dataSize = 0;
  const sample: SampledFeature[] = [];
  for await (const rows of pages) {
    for (const row of rows) {
      count++;
      dataSize += row.json.length;
      if (sample.length < STATISTICS_SAMPLE) sample.push(sampledFeature(row.json));
    }
  }
  return { count, dataSize, ...sampleStatistics(sample, count), estimated: count > sample.length };
}
