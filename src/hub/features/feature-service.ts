// The feature reads of the hub, through the read pipeline (writes go through hub/writes/).
import { bodyEtag } from '../../core/body-etag.js';
import { hubError } from '../../core/errors.js';
import type { FeatureFilter, FeatureQuery, FeatureRow, SortedQuery, SortValue } from '../../core/feature-query.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import { vectorTileOf } from '../../geo/vector-tile.js';
import type { Claims } from '../access/claims.js';
import { answerKey, type FeatureCollectionStream, type ReadOptions, renderPages, shaped, shapedOne } from './read-pipeline.js';
import { transformText } from './transform-plan.js';
import type { FeatureSource } from '../feature-source.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import { iterateHandle } from '../versions/iterate-position.js';
import { oldestReadable, readVersion, type VersionRef } from '../versions/space-versions.js';

/** A page of an iterate read; `returned` and `lastSeq` are final once its features have been consumed. */
export interface IteratePage extends FeatureCollectionStream {
  returned(): number;
  lastSeq(): number;
}

/** A page of a sorted read: `last` is where its last feature stands, for the next page (absent when empty). */
export interface SortedFeaturePage extends FeatureCollectionStream {
  returned: number;
  last?: SortValue[];
}

export interface SingleFeature { etag: string; cacheTTL?: number; json: string }

/** An MVT answer; `tile` is empty when no feature lies in the tile. */
export interface VectorTileAnswer { etag: string; cacheTTL?: number; tile: Buffer }

export const cacheTTLOf = (definition: SpaceDefinition): number | undefined => {
  const ttl = definition.cacheTTL;
  return ttl !== undefined && ttl > 0 ? ttl : undefined;
};

export class FeatureService {
  /** `spaces` resolves each space a request touches, once (shared with the statistics and spatial reads). */
  constructor(private readonly spaces: SpaceResolver) {}

  /** What a feature read of the space sees, once the caller may read every space it shows. */
  async reader(caller: Claims, spaceId: string): Promise<FeatureSource> {
    return (await this.spaces.open(caller, spaceId)).reader();
  }

  /**
   * As `reader` for an area read at HEAD of `query`: its first texts may come with the space's lookup (SpaceResolver.openWithArea),
   * for the read of this very query object.
   */
  async areaReader(caller: Claims, spaceId: string, query: FeatureQuery): Promise<FeatureSource> {
    return (await this.spaces.openWithArea(caller, spaceId, query)).reader();
  }

  /**
   * The version a read of the source asks for, checked against what the space keeps (a 400 names the oldest one it
   * can read); undefined for HEAD, which reads the current rows alone. The source has been granted already, so a
   * caller who may not read the space learns nothing of its versions.
   */
  versionOf(source: FeatureSource, ref: VersionRef): Promise<number | undefined> {
    return readVersion(source, ref);
  }

  /** The space and the feature come from one lookup at HEAD (see SpaceResolver.openWithFeature). */
  async getOne(caller: Claims, spaceId: string, featureId: string, options: ReadOptions, at: VersionRef = 'HEAD'): Promise<SingleFeature> {
    if (at !== 'HEAD') return this.getOneAt(caller, spaceId, featureId, options, at);
    const found = await this.spaces.openWithFeature(caller, spaceId, featureId);
    const stored = await found.read();
    const json = stored === undefined ? undefined : shapedOne(stored, options);
    if (stored === undefined || json === undefined) throw hubError('featureNotFound');
    return { etag: bodyEtag(json), cacheTTL: cacheTTLOf(found.definition), json };
  }

  private async getOneAt(caller: Claims, spaceId: string, featureId: string, options: ReadOptions, at: Exclude<VersionRef, 'HEAD'>): Promise<SingleFeature> {
    const source = await this.reader(caller, spaceId);
    const version = await this.versionOf(source, at);
    let stored: string | undefined;
    for await (const rows of source.query({ ids: [featureId], limit: 1, version }, options.signal)) stored = rows[0]?.json;
    const json = stored === undefined ? undefined : shapedOne(stored, options);
    if (json === undefined) throw hubError('featureNotFound');
    return { etag: bodyEtag(json), cacheTTL: cacheTTLOf(source.space.definition), json };
  }

  /** `filter` (the author) applies to the states read at a version, not to `version=*`, which lists a feature's states. */
  async getByIds(caller: Claims, spaceId: string, ids: string[], options: ReadOptions, at: VersionRef = 'HEAD', filter: FeatureFilter = {}): Promise<FeatureCollectionStream> {
    const source = await this.reader(caller, spaceId);
    const unique = [...new Set(ids)];
    if (at === '*') return this.states(source, unique, options);
    return this.collection(source, { ...filter, ids: unique, limit: unique.length, version: await this.versionOf(source, at) }, options);
  }

  /**
   * Every kept state of the features (`version=*`), oldest first, an id's states together in the order of the ids:
   * a FeatureCollection, as the reference hub answers, each state with the version that wrote it in its namespace.
   */
  private async states(source: FeatureSource, ids: string[], options: ReadOptions): Promise<FeatureCollectionStream> {
    const oldest = oldestReadable(source.space.definition, await source.versions());
    const rows = await source.featureStates(ids, oldest);
    async function* features(): AsyncIterable<string | Buffer> {
      const texts = rows.flatMap((row) => transformText(row.json, options.transforms) ?? []);
      if (texts.length > 0) yield shaped(texts.join(','), options);
    }
    return { key: answerKey(source, options.etagKey), cacheTTL: cacheTTLOf(source.space.definition), features: features(), trailer: () => ({}) };
  }

  /** Search and the spatial reads: the query's filters, spatial condition and limit, in insertion order. */
  async search(caller: Claims, spaceId: string, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, options: ReadOptions,
    at: VersionRef = 'HEAD'): Promise<FeatureCollectionStream> {
    const source = await this.reader(caller, spaceId);
    return this.collection(source, { ...query, version: await this.versionOf(source, at) }, options);
  }

  /**
   * A handle is the last insertion sequence returned, and the version read when not HEAD, so that the next page reads
   * the same one; one comes back only when the page is full (API.md 5.7).
   */
  async iterate(caller: Claims, spaceId: string, filter: FeatureFilter, afterSeq: number, limit: number, options: ReadOptions,
    at: VersionRef = 'HEAD'): Promise<FeatureCollectionStream> {
    const source = await this.reader(caller, spaceId);
    const version = await this.versionOf(source, at);
    const page = this.pageOf(source, { ...filter, version }, afterSeq, limit, options);
    const handle = () => iterateHandle({ afterSeq: page.lastSeq(), version });
    return { ...page, trailer: () => (page.returned() === limit ? { handle: handle(), nextPageToken: handle() } : {}) };
  }

  /**
   * One keyset page in insertion order after `afterSeq`, optionally in an area (OGC items): once its features
   * have been consumed, `returned` and `lastSeq` tell how many came and where the next page starts.
   */
  async iteratePage(caller: Claims, spaceId: string, filter: Omit<FeatureQuery, 'ids' | 'afterSeq' | 'limit' | 'version'>, afterSeq: number, limit: number,
    options: ReadOptions, at: VersionRef = 'HEAD'): Promise<IteratePage> {
    const source = await this.reader(caller, spaceId);
    return this.pageOf(source, { ...filter, version: await this.versionOf(source, at) }, afterSeq, limit, options);
  }

  /** One page in a sort order after a position (OGC items with sortby): read whole before it is answered. */
  async sortedPage(caller: Claims, spaceId: string, query: Omit<SortedQuery, 'version'>, options: ReadOptions, at: VersionRef = 'HEAD'): Promise<SortedFeaturePage> {
    const source = await this.reader(caller, spaceId);
    const version = await this.versionOf(source, at);
    const page = await source.sortedPage({ ...query, version }, options.signal);
    const texts = page.texts.flatMap((text) => transformText(text, options.transforms) ?? []);
    async function* features(): AsyncIterable<string | Buffer> {
      if (texts.length > 0) yield shaped(texts.join(','), options);
    }
    return {
      key: answerKey(source, options.etagKey, version), cacheTTL: cacheTTLOf(source.space.definition), features: features(), trailer: () => ({}),
      returned: page.texts.length, ...(page.last ? { last: page.last } : {}),
    };
  }

  private pageOf(source: FeatureSource, filter: Omit<FeatureQuery, 'ids' | 'afterSeq' | 'limit'>, afterSeq: number, limit: number,
    options: ReadOptions): IteratePage {
    let returned = 0;
    let lastSeq = afterSeq;
    const onPage = (count: number, last: number) => {
      returned += count;
      lastSeq = last;
    };
    return {
      key: answerKey(source, options.etagKey, filter.version),
      cacheTTL: cacheTTLOf(source.space.definition),
      features: renderPages(source, { ...filter, afterSeq, limit }, options, onPage),
      trailer: () => ({}),
      returned: () => returned,
      lastSeq: () => lastSeq,
    };
  }

  /**
   * At HEAD from the counters where the filter allows; at a version by counting the read (ADR 002): the counters
   * hold HEAD only.
   */
  async count(caller: Claims, spaceId: string, filter: FeatureFilter, signal?: AbortSignal, at: VersionRef = 'HEAD'): Promise<{ count: number }> {
    const source = await this.reader(caller, spaceId);
    const version = await this.versionOf(source, at);
    if (version === undefined) return { count: await source.count(filter, signal) };
    return { count: await source.countUpTo({ ...filter, version, limit: Number.MAX_SAFE_INTEGER }, signal) };
  }

  /**
   * The features of a tile query as one vector tile, encoded by the storage engine (API.md 6.2); with
   * `summarize` (clustering) the tile holds the features it makes of the rows instead.
   */
  async vectorTile(source: FeatureSource, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, request: VectorTileRequest, options: ReadOptions,
    summarize?: (rows: AsyncIterable<FeatureRow[]>) => Promise<string[]>): Promise<VectorTileAnswer> {
    const rows = source.query(query, options.signal);
    async function* cells(): AsyncIterable<Array<{ json: string }>> {
      if (summarize) yield (await summarize(rows)).map((json) => ({ json }));
    }
    const tile = summarize ? await vectorTileOf(cells(), request) : await source.vectorTile(query, request, options.signal);
    return { etag: bodyEtag(tile), cacheTTL: cacheTTLOf(source.space.definition), tile };
  }

  /**
   * A collection computed from every feature a query finds (clustering): `summarize` reads the rows page by
   * page and returns the answer's feature texts. It runs when the answer starts, before the status line.
   */
  summary(source: FeatureSource, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, options: ReadOptions,
    summarize: (rows: AsyncIterable<FeatureRow[]>) => Promise<string[]>): FeatureCollectionStream {
    const rows = source.query(query, options.signal);
    async function* features(): AsyncIterable<string> {
      const texts = await summarize(rows);
      if (texts.length > 0) yield texts.join(',');
    }
    return { key: answerKey(source, options.etagKey, query.version), cacheTTL: cacheTTLOf(source.space.definition), features: features(), trailer: () => ({}) };
  }

  /** The features a query finds in a source, rendered as the answer's pages. */
  collection(source: FeatureSource, query: FeatureQuery, options: ReadOptions): FeatureCollectionStream {
    return {
      key: answerKey(source, options.etagKey, query.version),
      cacheTTL: cacheTTLOf(source.space.definition),
      features: renderPages(source, query, options),
      trailer: () => ({}),
    };
  }
}
