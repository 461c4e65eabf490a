// The StatisticsResponse of a space (API.md 5.9).
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { Claims } from '../access/claims.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import { oldestReadable, type VersionRef } from '../versions/space-versions.js';
import type { FeatureService } from './feature-service.js';
import { statisticsOfRead } from './read-statistics.js';

const estimated = <T>(value: T, isEstimate = false) => ({ value, estimated: isEstimate });

/** The default of HUB_STATISTICS_EXACT_LIMIT (src/config/config.ts). */
export const DEFAULT_STATISTICS_EXACT_LIMIT = 10_000;

export class StatisticsService {
  /** Spaces with more features than `exactLimit` get estimates from a sample (storage.ts SpaceStatistics). */
  constructor(private readonly spaces: SpaceResolver, private readonly features: FeatureService, private readonly exactLimit = DEFAULT_STATISTICS_EXACT_LIMIT) {}

  /**
   * The StatisticsResponse without its `etag`, which is a hash of this body as sent (src/http/reply/read-reply.ts), and
   * the space's definition, which the OGC collection shows: one resolution serves both.
   */
  /**
   * At a version the statistics are counted over the read of that version (read-statistics.ts): the stored counters
   * and aggregates describe HEAD only. `contentUpdatedAt` stays the space's.
   */
  async statistics(caller: Claims, spaceId: string, at: VersionRef = 'HEAD'): Promise<{ body: { type: string } & Record<string, unknown>; definition: SpaceDefinition }> {
    const scope = await this.spaces.open(caller, spaceId);
    const source = scope.reader();
    const { space } = source;
    const version = await this.features.versionOf(source, at);
    const [stats, versions] = await Promise.all([
      version === undefined ? source.statistics({ exactUpTo: this.exactLimit }) : statisticsOfRead(source.query({ limit: Number.MAX_SAFE_INTEGER, version })),
      scope.layering.kind === 'virtual' ? undefined : source.versions()]);
    const searchable = space.definition.searchableProperties ? 'PARTIAL' : 'ALL';
    // `false` says the property is not indexed for search (API.md 3.1): only `true` makes it searchable.
    const searchableKeys = new Set(Object.entries(space.definition.searchableProperties ?? {})
      .filter(([, flag]) => flag === true).map(([path]) => path.split('::')[0]));
    const properties = stats.properties.map((property) => ({
      key: property.key,
      count: property.count,
      searchable: searchable === 'ALL' || searchableKeys.has(property.key),
      ...(property.datatype ? { datatype: property.datatype } : {}),
    }));
    return {
      definition: space.definition,
      body: {
        type: 'StatisticsResponse',
        count: estimated(stats.count),
        byteSize: estimated(stats.dataSize, true),
        dataSize: estimated(stats.dataSize, true),
        bbox: estimated(stats.bbox ?? [], stats.estimated),
        geometryTypes: estimated(stats.geometryTypes, stats.estimated),
        tags: estimated(stats.tags, stats.estimated),
        properties: { ...estimated(properties, stats.estimated), searchable },
        searchable,
        contentUpdatedAt: estimated(source.contentUpdatedAt),
        // The versions a read can ask for (ADR 002), once the space has one: a composite space's are its own layer's; a virtual space has none.
        ...(versions && versions.head >= 0
          ? { minVersion: estimated(oldestReadable(space.definition, versions)), maxVersion: estimated(versions.head) } : {}),
      },
    };
  }
}
