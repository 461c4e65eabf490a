// The features a read sees, whatever holds them: one space's own (here) or several spaces combined (layers/layered-source.ts).
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery } from '../core/feature-query.js';
import type { VectorTileRequest } from '../geo/vector-tile-request.js';
import type { SpaceStatistics, SpaceVersions, StatisticsOptions, Storage, StoredSpace, TagRecord } from '../storage/storage.js';

/**
 * The read side of a space as FeatureService uses it: FeatureStore's reads without the space key. A row's `seq`
 * (and a page's `lastSeq`) is a read position that `afterSeq` resumes after: a layered source puts the layer
 * into it (layer-cursor.ts), so iterate handles stay plain numbers.
 */
export interface FeatureSource {
  /** The space the request names. */
  readonly space: StoredSpace;
  /** Identifies the content of every space read: it goes into the ETags. */
  readonly version: string;
  /**
   * Identifies what a read at `version` sees (ADR 002): `version` for HEAD. A space's past version does not change
   * while it can be read (a version no longer kept answers 400), so its answers keep their ETags across later writes.
   */
  contentAt(version: number | undefined): string;
  /** The time of the last change to any space read. */
  readonly contentUpdatedAt: number;
  query(query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]>;
  /**
   * With `plain`, texts without the namespace where the storage knows where it is (Storage's `queryText`); a source that
   * cannot (a virtual or composite space's layers) gives stored texts, whose pages have no `cut`.
   */
  queryText(query: FeatureQuery, signal?: AbortSignal, plain?: boolean): AsyncIterable<FeatureTextPage>;
  count(filter: FeatureFilter, signal?: AbortSignal): Promise<number>;
  countUpTo(query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number>;
  /** A page in a sort order (FeatureStore.sortedPage); a virtual or composite space merges its layers' (layered-source.ts). */
  sortedPage(query: SortedQuery, signal?: AbortSignal): Promise<SortedPage>;
  vectorTile(query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer>;
  statistics(options: StatisticsOptions): Promise<SpaceStatistics>;
  /** The space's HEAD version and where its history begins (ADR 002). */
  versions(): Promise<SpaceVersions>;
  /** Every state of the ids that existed at `oldest` or later, oldest first, in the order of the ids. */
  featureStates(ids: readonly string[], oldest: number): Promise<FeatureRow[]>;
  /** The space's tag of that id, naming a version (ADR 002). */
  tag(id: string): Promise<TagRecord | undefined>;
  tags(): Promise<TagRecord[]>;
}

/** The first texts of one area read, read with the space's lookup (SpaceStore.getWithArea), for the query they answer. */
export interface PrefetchedArea {
  query: FeatureQuery;
  first: { page: FeatureTextPage; complete: boolean };
}

/** The prefetched page, then what follows it from storage unless it was all the read finds. */
async function* afterPrefetched(prefetched: PrefetchedArea, rest: (query: FeatureQuery) => AsyncIterable<FeatureTextPage>): AsyncIterable<FeatureTextPage> {
  const { query, first: { page, complete } } = prefetched;
  if (page.count > 0) yield page;
  if (!complete) yield* rest({ ...query, afterSeq: page.lastSeq, limit: query.limit - page.count });
}

/** A space read as it is stored. */
export class PlainSource implements FeatureSource {
  readonly version: string;
  readonly contentUpdatedAt: number;

  /** `prefetched` is handed out once, to the read of the very query it was read for. */
  constructor(private readonly storage: Storage, readonly space: StoredSpace, private prefetched?: PrefetchedArea) {
    // The creation time tells apart a space deleted and created again with the same id, whose revision counts from 0 again.
    this.version = `${String(space.definition.createdAt)}\n${space.revision}`;
    this.contentUpdatedAt = space.contentUpdatedAt;
  }

  contentAt(version: number | undefined): string {
    return version === undefined ? this.version : `${String(this.space.definition.createdAt)}\n@${version}`;
  }

  query(query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]> {
    return this.storage.features.query(this.space.key, query, signal);
  }

  queryText(query: FeatureQuery, signal?: AbortSignal, plain?: boolean): AsyncIterable<FeatureTextPage> {
    const { prefetched } = this;
    if (prefetched?.query === query && !plain) {
      this.prefetched = undefined;
      return afterPrefetched(prefetched, (rest) => this.storage.features.queryText(this.space.key, rest, signal));
    }
    return this.storage.features.queryText(this.space.key, query, signal, plain);
  }

  count(filter: FeatureFilter, signal?: AbortSignal): Promise<number> {
    return this.storage.features.count(this.space.key, filter, signal);
  }

  countUpTo(query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number> {
    return this.storage.features.countUpTo(this.space.key, query, signal);
  }

  sortedPage(query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    return this.storage.features.sortedPage(this.space.key, query, signal);
  }

  vectorTile(query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer> {
    return this.storage.features.vectorTile(this.space.key, query, tile, signal);
  }

  statistics(options: StatisticsOptions): Promise<SpaceStatistics> {
    return this.storage.features.statistics(this.space.key, options);
  }

  versions(): Promise<SpaceVersions> {
    return this.storage.features.versions(this.space.key);
  }

  featureStates(ids: readonly string[], oldest: number): Promise<FeatureRow[]> {
    return this.storage.features.featureStates(this.space.key, ids, oldest);
  }

  tag(id: string): Promise<TagRecord | undefined> {
    return this.storage.history.tag(this.space.key, id);
  }

  tags(): Promise<TagRecord[]> {
    return this.storage.history.tags(this.space.key);
  }
}
