// The StatisticsResponse of a space (API.md 5.9).
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { Claims } from '../access/claims.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import { oldestReadable } from '../versions/space-versions.js';

const estimated = <T>(value: T, isEstimate = false) => ({ value, estimated: isEstimate });

/** The default of HUB_STATISTICS_EXACT_LIMIT (src/config/config.ts). */
export const DEFAULT_STATISTICS_EXACT_LIMIT = 10_000;

export class StatisticsService {
  /** Spaces with more features than `exactLimit` get estimates from a sample (storage.ts SpaceStatistics). */
  constructor(private readonly spaces: SpaceResolver, private readonly exactLimit = DEFAULT_STATISTICS_EXACT_LIMIT) {}

  /**
   * The StatisticsResponse without its `etag`, which is a hash of this body as sent (src/http/reply/read-reply.ts), and
   * the space's definition, which the OGC collection shows: one resolution serves both.
   */
  async statistics(caller: Claims, spaceId: string): Promise<{ body: { type: string } & Record<string, unknown>; definition: SpaceDefinition }> {
    const scope = await this.spaces.open(caller, spaceId);
    const source = scope.reader();
    const { space } = source;
    const [stats, versions] = await Promise.all([source.statistics({ exactUpTo: this.exactLimit }),
      scope.layering.kind === 'plain' ? source.versions() : undefined]);
    const searchable = space.definition.searchableProperties ? 'PARTIAL' : 'ALL';
    const searchableKeys = new Set(Object.keys(space.definition.searchableProperties ?? {})
      .map((path) => path.split('::')[0]));
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
        // The versions a read can ask for (ADR 002), once the space has one; a virtual or composite space has none of its own.
        ...(versions && versions.head >= 0
          ? { minVersion: estimated(oldestReadable(space.definition, versions)), maxVersion: estimated(versions.head) } : {}),
      },
    };
  }
}
