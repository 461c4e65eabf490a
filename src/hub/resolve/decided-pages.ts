// A granted read source whose streamed reads are decided again after each page they read past the first: a stream that outlives its caller's right to read stops there.
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery } from '../../core/feature-query.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import type { SpaceStatistics, SpaceVersions, StatisticsOptions, StoredSpace, TagRecord } from '../../storage/storage.js';
import type { FeatureSource } from '../feature-source.js';

/**
 * Pages of a long read (iterate, search, a streamed area read, an export) are read one by one as the client takes them,
 * each in its own statement, so they see writes committed after the request's decision: a space unshared while a
 * stranger's read of it waits on the client would otherwise stream what its owner wrote after unsharing. A page is
 * decided again once it has been read and before it is handed on: everything in it was committed before that
 * decision, so a write made after a change of rights never goes out on a decision from before it (as event streams
 * do, event-feed.ts). The first page stays on the request's decision: reads that fit in one page cost nothing more.
 */
export class DecidedPages implements FeatureSource {
  constructor(private readonly granted: FeatureSource, private readonly decideAgain: () => Promise<void>) {}

  get space(): StoredSpace {
    return this.granted.space;
  }

  get version(): string {
    return this.granted.version;
  }

  get contentUpdatedAt(): number {
    return this.granted.contentUpdatedAt;
  }

  contentAt(version: number | undefined): string {
    return this.granted.contentAt(version);
  }

  query(query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]> {
    return this.decided(this.granted.query(query, signal));
  }

  queryText(query: FeatureQuery, signal?: AbortSignal, plain?: boolean): AsyncIterable<FeatureTextPage> {
    return this.decided(this.granted.queryText(query, signal, plain));
  }

  count(filter: FeatureFilter, signal?: AbortSignal): Promise<number> {
    return this.granted.count(filter, signal);
  }

  countUpTo(query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number> {
    return this.granted.countUpTo(query, signal);
  }

  sortedPage(query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    return this.granted.sortedPage(query, signal);
  }

  vectorTile(query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer> {
    return this.granted.vectorTile(query, tile, signal);
  }

  statistics(options: StatisticsOptions): Promise<SpaceStatistics> {
    return this.granted.statistics(options);
  }

  versions(): Promise<SpaceVersions> {
    return this.granted.versions();
  }

  featureStates(ids: readonly string[], oldest: number): Promise<FeatureRow[]> {
    return this.granted.featureStates(ids, oldest);
  }

  tag(id: string): Promise<TagRecord | undefined> {
    return this.granted.tag(id);
  }

  tags(): Promise<TagRecord[]> {
    return this.granted.tags();
  }

  private async *decided<T>(pages: AsyncIterable<T>): AsyncIterable<T> {
    let first = true;
    for await (const page of pages) {
      if (!first) await this.decideAgain();
      first = false;
      yield page;
    }
  }
}
