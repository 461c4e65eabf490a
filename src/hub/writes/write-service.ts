// The feature writes of the hub: each request's entries go through the one write pipeline (write-pipeline.ts).
import type { FeatureFilter } from '../../core/feature-query.js';
import type { JobFence, Storage } from '../../storage/storage.js';
import type { Claims } from '../access/claims.js';
import { logListenerOf } from '../activity-log/log-listener.js';
import type { FeatureSource } from '../feature-source.js';
import { storedFeatureId } from '../feature-text.js';
import { ProcessorCache } from '../processors/space-processors.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import type { SpaceScope } from '../resolve/space-scope.js';
import { normalizeFeature } from './feature-input.js';
import { type EntryDefaults, type WriteBody, writeEntries } from './write-entries.js';
import { writeThrough } from './write-pipeline.js';
import type { Pruning } from '../versions/pruning.js';
import { keepsHistory } from '../versions/space-versions.js';
import type { WriteEntry, WriteOptions, WriteResult } from './write-plan.js';

export interface CollectionWrite extends WriteOptions, EntryDefaults {
  caller: Claims;
  spaceId: string;
  body: WriteBody;
  /** A job's chunk: it commits only while the job's node holds its lease, and records the job's progress with it. */
  fence?: JobFence;
}

export interface SingleWrite extends WriteOptions {
  caller: Claims;
  spaceId: string;
  featureId: string;
  body: Record<string, unknown>;
  prefixId: string;
}

/** Features deleted per transaction when a delete by filter goes through the write path: a long delete holds no lock for long. */
const DELETE_PAGE = 1000;

const NO_ANSWER: WriteOptions = { transactional: true, respond: false, addTags: [], removeTags: [] };

export class WriteService {
  private readonly processors = new ProcessorCache();
  /** `spaces` resolves each space a request touches, once (shared with the reads). */
  constructor(private readonly storage: Storage, private readonly spaces: SpaceResolver, private readonly pruning?: Pruning) {}

  private async writable(caller: Claims, spaceId: string): Promise<SpaceScope> {
    const scope = await this.spaces.open(caller, spaceId);
    scope.writable();
    return scope;
  }

  /** Each layer keeping history that the write may have moved on is named for pruning (ADR 002). */
  private async apply(scope: SpaceScope, entries: WriteEntry[], options: WriteOptions, fence?: JobFence): Promise<WriteResult> {
    const result = await writeThrough(this.storage, this.processors, scope, entries, options, fence);
    for (const layer of scope.layers) if (keepsHistory(layer.definition)) this.pruning?.schedule(layer.id);
    return result;
  }

  async writeCollection(request: CollectionWrite): Promise<WriteResult> {
    const scope = await this.writable(request.caller, request.spaceId);
    const { transactional, respond, addTags, removeTags } = request;
    // The options without the body: the write holds its options until it commits, and the parsed body (the features
    // as sent, which the entries no longer need) would be copied by each garbage collection until then.
    return this.apply(scope, writeEntries(request.body, request), { transactional, respond, addTags, removeTags }, request.fence);
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
      NO_ANSWER);
  }

  async deleteByIds(caller: Claims, spaceId: string, ids: string[]): Promise<WriteResult> {
    const scope = await this.writable(caller, spaceId);
    const entries: WriteEntry[] = [...new Set(ids)].map((id, position) =>
      ({ id, position, onExists: 'delete', onNotExists: 'retain', onConflict: 'error' }));
    return this.apply(scope, entries, NO_ANSWER);
  }

  /** An empty filter deletes every feature of the space (`tags=*`). */
  async deleteMatching(caller: Claims, spaceId: string, filter: FeatureFilter): Promise<number> {
    const scope = await this.writable(caller, spaceId);
    const source = scope.deletable();
    // A layered space's features are deleted where its layers hold them; the storage's bulk delete bypasses the
    // write plan, so a logged space's deletes would go unlogged and a versioned space's deleted states unkept: they
    // go through the write path, page by page (each page a version).
    if (scope.layering.kind !== 'plain' || logListenerOf(scope.space.definition) || keepsHistory(scope.space.definition)) {
      return this.deletePaged(scope, source, filter);
    }
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
        deleted += (await this.apply(scope, entries, NO_ANSWER)).deleted.length;
      }
      if (read < DELETE_PAGE) return deleted;
    }
  }
}
