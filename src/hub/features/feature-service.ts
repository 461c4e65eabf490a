// The feature operations of the hub: writes through the write plan, reads through the read pipeline.
import { type HubError, hubError } from '../../core/errors.js';
import type { FeatureFilter, FeatureQuery, FeatureRow } from '../../core/feature-query.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { VectorTileRequest } from '../../core/vector-tile-request.js';
import { vectorTileOf } from '../../geo/vector-tile.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { authorize, authorizeRead, authorizeWrite, spaceResource } from '../access/authorization.js';
import { activityLogOf, withActivityLog } from '../activity-log/activity-log.js';
import { logListenerOf } from '../activity-log/log-listener.js';
import { matchingIdPages } from '../activity-log/logged-delete.js';
import type { Claims } from '../access/claims.js';
import { ProcessorCache, runTaggingRules, schemaRefusal } from '../processors/space-processors.js';
import { normalizeFeature } from './feature-input.js';
import type { FeatureParts } from './feature-text.js';
import { NS } from './namespace.js';
import { contentEtag, featureEtag, type FeatureCollectionStream, type ReadOptions, renderPages } from './read-pipeline.js';
import { transformText } from './transform-plan.js';
import { type EntryDefaults, type WriteBody, writeEntries } from './write-entries.js';
import { planWrite, type SpaceContext, type WriteEntry, type WriteOptions, type WriteResult } from './write-plan.js';

export interface CollectionWrite extends WriteOptions, EntryDefaults {
  caller: Claims;
  spaceId: string;
  body: WriteBody;
}

export interface SingleWrite extends WriteOptions {
  caller: Claims;
  spaceId: string;
  featureId: string;
  body: Record<string, unknown>;
  prefixId: string;
}

/** A page of an iterate read; `returned` and `lastSeq` are final once its features have been consumed. */
export interface IteratePage extends FeatureCollectionStream {
  returned(): number;
  lastSeq(): number;
}

export interface SingleFeature { etag: string; cacheTTL?: number; json: string }

/** An MVT answer; `tile` is empty when no feature lies in the tile. */
export interface VectorTileAnswer { etag: string; cacheTTL?: number; tile: Buffer }

const cacheTTLOf = (definition: SpaceDefinition): number | undefined => {
  const ttl = definition.cacheTTL;
  return ttl !== undefined && ttl > 0 ? ttl : undefined;
};

export class FeatureService {
  private readonly processors = new ProcessorCache();

  constructor(private readonly storage: Storage) {}

  /**
   * The space's processors: tagging rules run here, on the features as given, before the storage transaction;
   * the schema then checks, inside the write plan, each feature as it will be stored (a patch merged into the
   * stored feature, the final tags): see docs/decisions.md, "Processors".
   */
  private process(space: StoredSpace, entries: WriteEntry[]): ((parts: FeatureParts, entry: WriteEntry) => HubError | undefined) | undefined {
    const processors = this.processors.get(space.id, space.definition);
    if (processors.rules.length > 0) {
      const written = entries.filter((entry) => entry.feature !== undefined);
      const features = written.map((entry) => {
        const input = entry.feature as NonNullable<WriteEntry['feature']>;
        const feature = { type: 'Feature', id: entry.id, ...input.extra, geometry: input.geometry ?? null, properties: { ...input.properties } };
        return { feature, ruleTags: [] as string[] };
      });
      runTaggingRules(processors, features);
      written.forEach((entry, index) => {
        if (features[index].ruleTags.length > 0) entry.ruleTags = features[index].ruleTags;
      });
    }
    if (processors.validators.length === 0) return undefined;
    return (parts, entry) => schemaRefusal(processors, {
      type: 'Feature', id: parts.id, ...parts.extra, geometry: parts.geometry, properties: { ...parts.properties, [NS]: parts.namespace },
    }, entry.position, entry.id);
  }

  /** Each request looks its space up once; storage then works on the key it returned. */
  private async space(spaceId: string): Promise<StoredSpace> {
    const space = await this.storage.spaces.get(spaceId);
    if (!space) throw hubError('spaceOfFeaturesNotFound');
    return space;
  }

  /** The space of a feature read, once the caller may read it. */
  private async readable(caller: Claims, spaceId: string): Promise<StoredSpace> {
    const space = await this.space(spaceId);
    authorizeRead(caller, space.id, space.definition);
    return space;
  }

  private async writableSpace(spaceId: string): Promise<StoredSpace> {
    const space = await this.space(spaceId);
    if (space.definition.readOnly === true) throw hubError('readOnlySpace', { id: spaceId });
    return space;
  }

  /**
   * The rights check runs inside the storage transaction, on the plan: only then is it known what the write
   * inserts, updates, deletes or answers unchanged, and a refusal writes nothing. The feature quota counts the
   * space as the write starts: writes running at the same moment may together pass it by their own size.
   */
  private async apply(caller: Claims, space: StoredSpace, entries: WriteEntry[], options: WriteOptions): Promise<WriteResult> {
    const validate = this.process(space, entries);
    const quota = caller.limits?.maxFeaturesPerSpace;
    const before = quota !== undefined && quota > 0 ? await this.storage.features.count(space.key, {}) : 0;
    const log = await activityLogOf(this.storage, space);
    return this.storage.features.write(space.key, entries.map((entry) => entry.id), (existing) => {
      // A schema refusal is answered after the rights check: who may not write learns nothing of the schema.
      let refusal: HubError | undefined;
      const check = validate && ((parts: FeatureParts, entry: WriteEntry) => { refusal ??= validate(parts, entry); });
      const context: SpaceContext = { id: space.id, enableUUID: space.definition.enableUUID === true, check };
      const planned = planWrite(context, entries, options, existing);
      authorizeWrite(caller, space.id, space.definition, planned.actions);
      if (refusal) throw refusal;
      const after = before + planned.result.inserted.length - planned.result.deleted.length;
      if (quota !== undefined && quota > 0 && after > before && after > quota) {
        throw hubError('featureQuotaReached', { limit: quota, space: space.id, count: after });
      }
      return withActivityLog(log, planned, existing);
    });
  }

  async writeCollection(request: CollectionWrite): Promise<WriteResult> {
    const space = await this.writableSpace(request.spaceId);
    return this.apply(request.caller, space, writeEntries(request.body, request), request);
  }

  /** PUT and PATCH of one feature: the path id wins over the body's (API.md 4.4). */
  async writeOne(request: SingleWrite, mode: 'put' | 'patch'): Promise<string> {
    const space = await this.writableSpace(request.spaceId);
    const feature = normalizeFeature(request.body, 0, request.prefixId, request.featureId);
    const entry: WriteEntry = mode === 'put'
      ? { id: feature.id, position: 0, feature, onExists: 'replace', onNotExists: 'create', onConflict: 'error' }
      : { id: feature.id, position: 0, feature, onExists: 'patch', onNotExists: 'notFound', onConflict: 'error' };
    const result = await this.apply(request.caller, space, [entry], { ...request, transactional: true, respond: true });
    return result.features[0];
  }

  async deleteOne(caller: Claims, spaceId: string, featureId: string): Promise<void> {
    const space = await this.writableSpace(spaceId);
    await this.apply(caller, space, [{ id: featureId, position: 0, onExists: 'delete', onNotExists: 'notFound', onConflict: 'error' }],
      { transactional: true, respond: false, addTags: [], removeTags: [] });
  }

  async deleteByIds(caller: Claims, spaceId: string, ids: string[]): Promise<WriteResult> {
    const space = await this.writableSpace(spaceId);
    const entries: WriteEntry[] = [...new Set(ids)].map((id, position) =>
      ({ id, position, onExists: 'delete', onNotExists: 'retain', onConflict: 'error' }));
    return this.apply(caller, space, entries, { transactional: true, respond: false, addTags: [], removeTags: [] });
  }

  /** An empty filter deletes every feature of the space (`tags=*`). */
  async deleteMatching(caller: Claims, spaceId: string, filter: FeatureFilter): Promise<number> {
    const space = await this.writableSpace(spaceId);
    authorize(caller, [{ action: 'deleteFeatures', resource: spaceResource(space.id, space.definition) }]);
    if (!logListenerOf(space.definition)) return this.storage.features.deleteMatching(space.key, filter);
    // A logged space deletes through the write path, a page per transaction, so that every delete is logged.
    let deleted = 0;
    for await (const ids of matchingIdPages(this.storage.features, space.key, filter)) {
      deleted += (await this.deleteByIds(caller, spaceId, ids)).deleted.length;
    }
    return deleted;
  }

  /** The space and the feature come from one lookup: the most frequent read costs one database statement. */
  async getOne(caller: Claims, spaceId: string, featureId: string, options: ReadOptions): Promise<SingleFeature> {
    const found = await this.storage.spaces.getWithFeature(spaceId, featureId);
    if (!found) throw hubError('spaceOfFeaturesNotFound');
    authorizeRead(caller, spaceId, found.definition);
    const json = found.feature === undefined ? undefined : transformText(found.feature, options.transforms);
    if (found.feature === undefined || json === undefined) throw hubError('featureNotFound');
    return { etag: featureEtag(found.feature, options.etagKey), cacheTTL: cacheTTLOf(found.definition), json };
  }

  async getByIds(caller: Claims, spaceId: string, ids: string[], options: ReadOptions): Promise<FeatureCollectionStream> {
    const space = await this.readable(caller, spaceId);
    const unique = [...new Set(ids)];
    return this.collection(space, { ids: unique, limit: unique.length }, options);
  }

  /** Search and the spatial reads: the query's filters, spatial condition and limit, in insertion order. */
  async search(caller: Claims, spaceId: string, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, options: ReadOptions): Promise<FeatureCollectionStream> {
    const space = await this.readable(caller, spaceId);
    return this.collection(space, query, options);
  }

  /** A handle is the last insertion sequence returned; one comes back only when the page is full (API.md 5.7). */
  async iterate(caller: Claims, spaceId: string, filter: FeatureFilter, afterSeq: number, limit: number, options: ReadOptions): Promise<FeatureCollectionStream> {
    const page = await this.iteratePage(caller, spaceId, filter, afterSeq, limit, options);
    const handle = () => String(page.lastSeq());
    return { ...page, trailer: () => (page.returned() === limit ? { handle: handle(), nextPageToken: handle() } : {}) };
  }

  /**
   * One keyset page in insertion order after `afterSeq`, optionally in an area (OGC items): once its features
   * have been consumed, `returned` and `lastSeq` tell how many came and where the next page starts.
   */
  async iteratePage(caller: Claims, spaceId: string, filter: Omit<FeatureQuery, 'ids' | 'afterSeq' | 'limit'>, afterSeq: number, limit: number,
    options: ReadOptions): Promise<IteratePage> {
    const space = await this.readable(caller, spaceId);
    let returned = 0;
    let lastSeq = afterSeq;
    const onPage = (count: number, last: number) => {
      returned += count;
      lastSeq = last;
    };
    return {
      etag: contentEtag(space, options.etagKey),
      cacheTTL: cacheTTLOf(space.definition),
      features: renderPages(this.storage.features, space, { ...filter, afterSeq, limit }, options, onPage),
      trailer: () => ({}),
      returned: () => returned,
      lastSeq: () => lastSeq,
    };
  }

  async count(caller: Claims, spaceId: string, filter: FeatureFilter, signal?: AbortSignal): Promise<{ etag: string; count: number }> {
    const space = await this.readable(caller, spaceId);
    return { etag: contentEtag(space, 'count ' + JSON.stringify(filter)), count: await this.storage.features.count(space.key, filter, signal) };
  }

  /** How many features a query finds, counted up to its limit: the estimate of viz sampling. */
  async countUpTo(caller: Claims, spaceId: string, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, signal?: AbortSignal): Promise<number> {
    const space = await this.readable(caller, spaceId);
    return this.storage.features.countUpTo(space.key, query, signal);
  }

  /**
   * The features of a tile query as one vector tile, encoded by the storage engine (API.md 6.2); with
   * `summarize` (clustering) the tile holds the features it makes of the rows instead.
   */
  async vectorTile(caller: Claims, spaceId: string, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, request: VectorTileRequest, options: ReadOptions,
    summarize?: (rows: AsyncIterable<FeatureRow[]>) => Promise<string[]>): Promise<VectorTileAnswer> {
    const space = await this.readable(caller, spaceId);
    const etag = contentEtag(space, `${options.etagKey}\n${request.flatten ? 'mvtf' : 'mvt'}`);
    const rows = this.storage.features.query(space.key, query, options.signal);
    async function* cells(): AsyncIterable<Array<{ json: string }>> {
      if (summarize) yield (await summarize(rows)).map((json) => ({ json }));
    }
    const tile = summarize ? await vectorTileOf(cells(), request) : await this.storage.features.vectorTile(space.key, query, request, options.signal);
    return { etag, cacheTTL: cacheTTLOf(space.definition), tile };
  }

  /**
   * A collection computed from every feature a query finds (clustering): `summarize` reads the rows page by
   * page and returns the answer's feature texts. It runs when the answer starts, before the status line.
   */
  async summary(caller: Claims, spaceId: string, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, options: ReadOptions,
    summarize: (rows: AsyncIterable<FeatureRow[]>) => Promise<string[]>): Promise<FeatureCollectionStream> {
    const space = await this.readable(caller, spaceId);
    const rows = this.storage.features.query(space.key, query, options.signal);
    async function* features(): AsyncIterable<string> {
      const texts = await summarize(rows);
      if (texts.length > 0) yield texts.join(',');
    }
    return { etag: contentEtag(space, options.etagKey), cacheTTL: cacheTTLOf(space.definition), features: features(), trailer: () => ({}) };
  }

  private collection(space: StoredSpace, query: FeatureQuery, options: ReadOptions): FeatureCollectionStream {
    return {
      etag: contentEtag(space, options.etagKey),
      cacheTTL: cacheTTLOf(space.definition),
      features: renderPages(this.storage.features, space, query, options),
      trailer: () => ({}),
    };
  }
}
