// A granted read source whose long reads are decided again as they go: a stream or a long whole answer that outlives its caller's right to read stops there.
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery } from '../../core/feature-query.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import type { SpaceStatistics, SpaceVersions, StatisticsOptions, StoredSpace, TagRecord } from '../../storage/storage.js';
import type { FeatureSource } from '../feature-source.js';

/**
 * How old a decision may be when a page read after it is handed on. Deciding again costs a lookup of the spaces
 * (a round trip on PostgreSQL): before each 1,000-row page it cost iterate a quarter of its hub CPU, so a read whose
 * pages come fast goes on on its decision for this long.
 */
export const DECISION_LIFETIME_MS = 100;

/**
 * Pages of a long read (iterate, search, a streamed area read, an export) are read one by one as the client takes them,
 * each in its own statement, so they see writes committed after the request's decision: a space unshared while a
 * stranger's read of it waits on the client would otherwise stream what its owner wrote after unsharing. A page is
 * handed on only on a decision taken at most DECISION_LIFETIME_MS before it was read: when the last one is older, the
 * read is decided again first. So a change of rights reaches every read in progress within that time, and a write
 * made after it goes out only if it was read within that time (as event streams decide again after reading HEAD,
 * event-feed.ts). Reads that end within that time cost nothing more.
 */
export class DecidedPages implements FeatureSource {
  /** `decidedAt`: when the rows the first decision was made on were read (the request's scope opened). */
  constructor(private readonly granted: FeatureSource, private readonly decideAgain: () => Promise<void>, private decidedAt: number) {}

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
    return this.decidedWhole(this.granted.count(filter, signal));
  }

  countUpTo(query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number> {
    return this.decidedWhole(this.granted.countUpTo(query, signal));
  }

  sortedPage(query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    return this.decidedWhole(this.granted.sortedPage(query, signal));
  }

  vectorTile(query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer> {
    return this.decidedWhole(this.granted.vectorTile(query, tile, signal));
  }

  statistics(options: StatisticsOptions): Promise<SpaceStatistics> {
    return this.decidedWhole(this.granted.statistics(options));
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
    for await (const page of pages) {
      await this.decidedFor(Date.now());
      yield page;
    }
  }

  /**
   * A whole answer made of reads that may run long: a layered space's tile, statistics, count or sorted page reads its
   * layers page by page, each page its own statement (a tile of 30,000 features took seconds on PostgreSQL), and a
   * feature written after the space was unshared went out in a stranger's tile. Handed on as a page is: on a decision
   * taken at most DECISION_LIFETIME_MS before it was read, when it was all read. A plain space's answer is one
   * statement, mostly within that time, and costs nothing more.
   */
  private async decidedWhole<T>(answer: Promise<T>): Promise<T> {
    const whole = await answer;
    await this.decidedFor(Date.now());
    return whole;
  }

  /** What was read by `readBy` may be handed on: decided again first when the last decision is older than DECISION_LIFETIME_MS. */
  private async decidedFor(readBy: number): Promise<void> {
    if (readBy - this.decidedAt <= DECISION_LIFETIME_MS) return;
    await this.decideAgain();
    this.decidedAt = readBy;
  }
}
