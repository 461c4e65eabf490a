// The feature operations of the hub: writes through the write plan, reads through the read pipeline.
import { bodyEtag } from '../../core/body-etag.js';
import { type HubError, hubError } from '../../core/errors.js';
import type { FeatureFilter, FeatureQuery, FeatureRow } from '../../core/feature-query.js';
import type { SpaceDefinition } from '../../core/space-definition.js';
import type { VectorTileRequest } from '../../core/vector-tile-request.js';
import { vectorTileOf } from '../../geo/vector-tile.js';
import type { Storage, StoredSpace } from '../../storage/storage.js';
import { withActivityLog } from '../activity-log/activity-log.js';
import { logListenerOf } from '../activity-log/log-listener.js';
import type { Claims } from '../access/claims.js';
import { ProcessorCache, runTaggingRules, schemaRefusal } from '../processors/space-processors.js';
import { normalizeFeature } from '../writes/feature-input.js';
import { type FeatureParts, storedFeatureId } from '../feature-text.js';
import { NS } from '../namespace.js';
import { answerKey, type FeatureCollectionStream, type ReadOptions, renderPages } from './read-pipeline.js';
import { transformText } from './transform-plan.js';
import type { FeatureSource } from '../feature-source.js';
import { writeLayered } from '../layers/layered-write.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { SpaceScope } from '../resolve/space-scope.js';
import { type EntryDefaults, type WriteBody, writeEntries } from '../writes/write-entries.js';
import { planWrite, type SpaceContext, type WriteEntry, type WriteOptions, type WriteResult } from '../writes/write-plan.js';

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

/** Features deleted per transaction when a delete by filter goes through the write path: a long delete holds no lock for long. */
const DELETE_PAGE = 1000;

const cacheTTLOf = (definition: SpaceDefinition): number | undefined => {
  const ttl = definition.cacheTTL;
  return ttl !== undefined && ttl > 0 ? ttl : undefined;
};

export class FeatureService {
  private readonly processors = new ProcessorCache();
  /** `spaces` resolves each space a request touches, once (shared with the statistics and spatial reads). */
  constructor(private readonly storage: Storage, private readonly spaces: SpaceResolver) {}

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
        const feature = { type: 'Feature', id: entry.id, ...input.extra, geometry: input.geometry ?? null, properties: input.properties ?? {} };
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

  /** What a feature read of the space sees, once the caller may read every space it shows. */
  async reader(caller: Claims, spaceId: string): Promise<FeatureSource> {
    return (await this.spaces.open(caller, spaceId)).reader();
  }

  private async writable(caller: Claims, spaceId: string): Promise<SpaceScope> {
    const scope = await this.spaces.open(caller, spaceId);
    if (scope.space.definition.readOnly === true) throw hubError('readOnlySpace', { id: spaceId });
    return scope;
  }

  /**
   * Before the plan looks at anything stored, the caller must hold some feature right on the space, and on a
   * layered space may read every layer (the plan sees their features). The rights of what the plan does are
   * decided inside the storage transaction, on the plan: only then is it known what the write inserts, updates,
   * deletes or answers, and a refusal writes nothing. The feature quota counts the space as the write starts:
   * writes running at the same moment may together pass it by their own size.
   */
  private async apply(scope: SpaceScope, entries: WriteEntry[], options: WriteOptions): Promise<WriteResult> {
    const { space, caller } = scope;
    scope.decideWriter();
    if (scope.layering.kind !== 'plain') return writeLayered(this.storage, scope, entries, options, (layer, subset) => this.process(layer, subset));
    const validate = this.process(space, entries);
    const quota = caller.limits?.maxFeaturesPerSpace;
    const before = quota !== undefined && quota > 0 ? await this.storage.features.count(space.key, {}) : 0;
    const log = await scope.logOf(space);
    return this.storage.features.write(space.key, entries.map((entry) => entry.id), (existing) => {
      // A schema refusal is answered after the rights check: who may not write learns nothing of the schema.
      let refusal: HubError | undefined;
      const check = validate && ((parts: FeatureParts, entry: WriteEntry) => { refusal ??= validate(parts, entry); });
      const context: SpaceContext = { id: space.id, enableUUID: space.definition.enableUUID === true, check };
      const planned = planWrite(context, entries, options, existing);
      scope.decideWrite(planned.actions);
      if (planned.refusal) throw planned.refusal;
      if (refusal) throw refusal;
      const after = before + planned.result.inserted.length - planned.result.deleted.length;
      if (quota !== undefined && quota > 0 && after > before && after > quota) {
        throw hubError('featureQuotaReached', { limit: quota, space: space.id, count: after });
      }
      return withActivityLog(log, planned, existing);
    });
  }

  async writeCollection(request: CollectionWrite): Promise<WriteResult> {
    const scope = await this.writable(request.caller, request.spaceId);
    return this.apply(scope, writeEntries(request.body, request), request);
  }

  /** PUT and PATCH of one feature: the path id wins over the body's (API.md 4.4). */
  async writeOne(request: SingleWrite, mode: 'put' | 'patch'): Promise<string> {
    const scope = await this.writable(request.caller, request.spaceId);
    const feature = normalizeFeature(request.body, 0, request.prefixId, request.featureId);
    const entry: WriteEntry = mode === 'put'
      ? { id: feature.id, position: 0, feature, onExists: 'replace', onNotExists: 'create', onConflict: 'error' }
      : { id: feature.id, position: 0, feature, onExists: 'patch', onNotExists: 'notFound', onConflict: 'error' };
    const result = await this.apply(scope, [entry], { ...request, transactional: true, respond: true });
    return result.features[0];
  }

  async deleteOne(caller: Claims, spaceId: string, featureId: string): Promise<void> {
    await this.apply(await this.writable(caller, spaceId), [{ id: featureId, position: 0, onExists: 'delete', onNotExists: 'notFound', onConflict: 'error' }],
      { transactional: true, respond: false, addTags: [], removeTags: [] });
  }

  async deleteByIds(caller: Claims, spaceId: string, ids: string[]): Promise<WriteResult> {
    const scope = await this.writable(caller, spaceId);
    const entries: WriteEntry[] = [...new Set(ids)].map((id, position) =>
      ({ id, position, onExists: 'delete', onNotExists: 'retain', onConflict: 'error' }));
    return this.apply(scope, entries, { transactional: true, respond: false, addTags: [], removeTags: [] });
  }

  /** An empty filter deletes every feature of the space (`tags=*`). */
  async deleteMatching(caller: Claims, spaceId: string, filter: FeatureFilter): Promise<number> {
    const scope = await this.writable(caller, spaceId);
    const source = scope.deletable();
    // A layered space's features are deleted where its layers hold them; the storage's bulk delete bypasses the
    // write plan, so a logged space's deletes would go unlogged: both go through the write path, page by page.
    if (scope.layering.kind !== 'plain' || logListenerOf(scope.space.definition)) return this.deletePaged(scope, source, filter);
    return this.storage.features.deleteMatching(scope.space.key, filter);
  }

  /**
   * Deletes what the space shows of a filter through the write path, a page of ids per transaction in read order:
   * a virtual or composite space's features (their layers decide where), or a logged space's (each page logged).
   */
  private async deletePaged(scope: SpaceScope, source: FeatureSource, filter: FeatureFilter): Promise<number> {
    let deleted = 0;
    for (let afterSeq = 0; ;) {
      const ids = new Set<string>();
      let read = 0;
      for await (const rows of source.query({ ...filter, afterSeq, limit: DELETE_PAGE })) {
        for (const row of rows) ids.add(storedFeatureId(row.json));
        read += rows.length;
        afterSeq = rows[rows.length - 1].seq;
      }
      if (ids.size > 0) {
        const entries: WriteEntry[] = [...ids].map((id, position) => ({ id, position, onExists: 'delete', onNotExists: 'retain', onConflict: 'error' }));
        deleted += (await this.apply(scope, entries, { transactional: true, respond: false, addTags: [], removeTags: [] })).deleted.length;
      }
      if (read < DELETE_PAGE) return deleted;
    }
  }

  /** The space and the feature come from one lookup (see SpaceResolver.openWithFeature). */
  async getOne(caller: Claims, spaceId: string, featureId: string, options: ReadOptions): Promise<SingleFeature> {
    const found = await this.spaces.openWithFeature(caller, spaceId, featureId);
    const stored = await found.read();
    const json = stored === undefined ? undefined : transformText(stored, options.transforms);
    if (stored === undefined || json === undefined) throw hubError('featureNotFound');
    return { etag: bodyEtag(json), cacheTTL: cacheTTLOf(found.definition), json };
  }

  async getByIds(caller: Claims, spaceId: string, ids: string[], options: ReadOptions): Promise<FeatureCollectionStream> {
    const source = await this.reader(caller, spaceId);
    const unique = [...new Set(ids)];
    return this.collection(source, { ids: unique, limit: unique.length }, options);
  }

  /** Search and the spatial reads: the query's filters, spatial condition and limit, in insertion order. */
  async search(caller: Claims, spaceId: string, query: Omit<FeatureQuery, 'ids' | 'afterSeq'>, options: ReadOptions): Promise<FeatureCollectionStream> {
    const source = await this.reader(caller, spaceId);
    return this.collection(source, query, options);
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
    const source = await this.reader(caller, spaceId);
    let returned = 0;
    let lastSeq = afterSeq;
    const onPage = (count: number, last: number) => {
      returned += count;
      lastSeq = last;
    };
    return {
      key: answerKey(source, options.etagKey),
      cacheTTL: cacheTTLOf(source.space.definition),
      features: renderPages(source, { ...filter, afterSeq, limit }, options, onPage),
      trailer: () => ({}),
      returned: () => returned,
      lastSeq: () => lastSeq,
    };
  }

  async count(caller: Claims, spaceId: string, filter: FeatureFilter, signal?: AbortSignal): Promise<{ count: number }> {
    const source = await this.reader(caller, spaceId);
    return { count: await source.count(filter, signal) };
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
    return { key: answerKey(source, options.etagKey), cacheTTL: cacheTTLOf(source.space.definition), features: features(), trailer: () => ({}) };
  }

  /** The features a query finds in a source, rendered as the answer's pages. */
  collection(source: FeatureSource, query: FeatureQuery, options: ReadOptions): FeatureCollectionStream {
    return {
      key: answerKey(source, options.etagKey),
      cacheTTL: cacheTTLOf(source.space.definition),
      features: renderPages(source, query, options),
      trailer: () => ({}),
    };
  }
}
