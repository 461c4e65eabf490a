// Reads through a virtual space (group, merge, override) or a composite space: several spaces' features as one.
import type { FeatureFilter, FeatureQuery, FeatureRow, FeatureTextPage, SortedPage, SortedQuery, SortValue } from '../../core/feature-query.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import { vectorTileOf } from '../../geo/vector-tile.js';
import type { BBox } from '../../geo/bbox.js';
import { statisticsOfRead } from '../features/read-statistics.js';
import { byCountThenKey } from '../../storage/shared/space-statistics.js';
import type { PropertyStatistic, SpaceStatistics, SpaceVersions, StatisticsOptions, Storage, StoredSpace, TagRecord } from '../../storage/storage.js';
import { hubError } from '../../core/errors.js';
import { storedFeatureId } from '../feature-text.js';
import type { FeatureSource } from '../feature-source.js';
import { decodePosition, encodePosition } from './layer-cursor.js';
import { mergeVersions } from './merged-feature.js';
import { isTombstone } from './tombstones.js';
import { compareKeys, type LayerPosition, type LayerRow, mergeSorted, positionOf } from './sorted-merge.js';

/**
 * `group` shows every layer's features; `override` shows each id once, from the last layer holding it;
 * `merge` shows each id once, its versions merged. A composite space is `override` over its base layers and
 * itself, whose tombstones hide what they delete.
 */
export type Combination = 'group' | 'override' | 'merge';

/** Rows read from one layer per step of an override or merge read: each step costs one lookup per other layer. */
const STEP_ROWS = 1000;

const rowsOf = async (pages: AsyncIterable<FeatureRow[]>): Promise<FeatureRow[]> => {
  const rows: FeatureRow[] = [];
  for await (const page of pages) rows.push(...page);
  return rows;
};

/** What a version must meet to be found: a query's conditions without its ids, position and limit. */
type Conditions = Omit<FeatureQuery, 'ids' | 'afterSeq' | 'limit'>;

/** The stored versions of these ids in each of `layers`, by feature id, in the order of `layers`; `conditions` keeps only the matching ones. */
export async function versionsByLayer(storage: Storage, layers: readonly StoredSpace[], ids: string[], signal?: AbortSignal,
  conditions?: Conditions): Promise<Array<Map<string, FeatureRow>>> {
  return Promise.all(layers.map(async (layer) => {
    const rows = await rowsOf(storage.features.query(layer.key, { ...conditions, ids, limit: ids.length }, signal));
    return new Map(rows.map((row) => [storedFeatureId(row.json), row]));
  }));
}

/** The conditions of a query without its ids, position and limit: what a version must meet to be found. */
const conditionsOf = ({ ids: _ids, afterSeq: _after, limit: _limit, ...rest }: FeatureQuery): Conditions => rest;

export class LayeredSource implements FeatureSource {
  readonly version: string;
  readonly contentUpdatedAt: number;

  /** The index of the space's own layer (a composite space's features), −1 for a virtual space. */
  private readonly own: number;

  /** `layers` in reading order; `masking` when layers above the first may hold tombstones (composite spaces). */
  constructor(private readonly storage: Storage, readonly space: StoredSpace, private readonly layers: readonly StoredSpace[],
    private readonly combination: Combination, private readonly masking: boolean) {
    this.own = masking ? layers.findIndex((layer) => layer.id === space.id) : -1;
    this.version = this.contentAt(undefined);
    this.contentUpdatedAt = Math.max(space.contentUpdatedAt, ...layers.map((layer) => layer.contentUpdatedAt));
  }

  /**
   * How the layers combine is part of the content (a PATCH from group to merge over the same spaces changes the
   * answers), then each space read; at a version, the composite space's own layer by that version, the others by
   * their revision at HEAD.
   */
  contentAt(version: number | undefined): string {
    const spaces = [this.space, ...this.layers.filter((layer) => layer.id !== this.space.id)];
    const layering = `${this.combination}${this.masking ? ' masking' : ''}`;
    const state = (layer: StoredSpace) => (version !== undefined && layer.id === this.space.id ? `@${version}` : String(layer.revision));
    return [layering, ...spaces.map((layer) => `${layer.id}\n${String(layer.definition.createdAt)}\n${state(layer)}`)].join('\n');
  }

  /**
   * The stored versions of these ids in the given layers (all by default; tombstones included), by layer index, each
   * layer at the version it is read at (see `at`); `conditions` keeps only the matching ones.
   */
  private async lookup(ids: string[], signal: AbortSignal | undefined, conditions: Conditions, layers = this.layers.map((_, index) => index)): Promise<Map<number, Map<string, FeatureRow>>> {
    const found = await Promise.all(layers.map(async (index) => (await versionsByLayer(this.storage, [this.layers[index]], ids, signal, this.at(index, conditions)))[0]));
    return new Map(layers.map((index, at) => [index, found[at]]));
  }

  /**
   * A read at a version of a composite space reads its own layer at that version and the spaces it extends at HEAD, as
   * the reference hub does (ADR 002): the version is the composite space's own, and the layers below number theirs
   * independently. A virtual space has no version of its own (`versions` refuses it).
   */
  private at<Q extends { version?: number }>(layer: number, query: Q): Q {
    if (query.version === undefined || layer === this.own) return query;
    return { ...query, version: undefined };
  }

  /** What the read shows of an id given its versions by layer: undefined when nothing (deleted or absent). */
  private effective(versions: ReadonlyArray<{ layer: number; row: FeatureRow }>): FeatureRow | undefined {
    if (versions.length === 0) return undefined;
    if (this.combination === 'merge') {
      const last = versions[versions.length - 1];
      return { seq: encodePosition(versions[0].layer, versions[0].row.seq), json: versions.length === 1 ? last.row.json : mergeVersions(versions.map((version) => version.row.json)) };
    }
    const { layer, row } = versions[versions.length - 1];
    return this.masking && isTombstone(row.json) ? undefined : { seq: encodePosition(layer, row.seq), json: row.json };
  }

  private async byIds(query: FeatureQuery & { ids: string[] }, signal?: AbortSignal): Promise<FeatureRow[]> {
    const found = await this.lookup(query.ids, signal, { version: query.version });
    const shown: FeatureRow[] = [];
    for (const id of query.ids) {
      const versions = this.layers.flatMap((_, layer) => {
        const row = found.get(layer)?.get(id);
        return row ? [{ layer, row }] : [];
      });
      const row = this.effective(versions);
      if (row) shown.push(row);
    }
    if (!query.properties && !query.where && !query.tags && !query.spatial && !query.sample) return shown.slice(0, query.limit);
    // Filters with ids: each shown version must itself match, which its own layer decides.
    const matching = await this.lookup(query.ids, signal, conditionsOf(query));
    return shown.filter((row) => {
      const id = storedFeatureId(row.json);
      // A merged feature matches when one of its versions does, as in the other merge reads.
      if (this.combination === 'merge') return [...matching.values()].some((held) => held.has(id));
      return matching.get(decodePosition(row.seq).layer)?.has(id) === true;
    }).slice(0, query.limit);
  }

  /**
   * Which rows of one step of layer `layer` the read shows, as they are shown. Override: those no later layer
   * holds (a later tombstone hides too), tombstones never. Merge: those no earlier layer shows for the same
   * query (the id was shown there), merged with the other layers' versions.
   */
  private async resolve(layer: number, rows: FeatureRow[], query: FeatureQuery, signal?: AbortSignal): Promise<FeatureRow[]> {
    const ids = rows.map((row) => storedFeatureId(row.json));
    if (this.combination === 'override') {
      const shown = await this.overridden(layer, ids, rows.map((row) => row.json), query.version, signal);
      return rows.flatMap((row, index) => (shown[index] ? [{ seq: encodePosition(layer, row.seq), json: row.json }] : []));
    }
    const earlier = this.layers.map((_, index) => index).filter((index) => index < layer);
    const shownEarlier = earlier.length === 0 ? new Map() : await this.lookup(ids, signal, conditionsOf(query), earlier);
    const versions = await this.lookup(ids, signal, { version: query.version });
    return rows.flatMap((row, index) => {
      const id = ids[index];
      if ([...shownEarlier.values()].some((held) => held.has(id))) return [];
      const all = this.layers.flatMap((_, at) => {
        const version = at === layer ? row : versions.get(at)?.get(id);
        return version ? [version.json] : [];
      });
      return [{ seq: encodePosition(layer, row.seq), json: all.length === 1 ? row.json : mergeVersions(all) }];
    });
  }

  /** Override: which of these versions of layer `layer` the read shows, those no later layer holds (a later tombstone hides too), tombstones never. */
  private async overridden(layer: number, ids: string[], texts: string[], version: number | undefined, signal?: AbortSignal): Promise<boolean[]> {
    const later = this.layers.map((_, index) => index).filter((index) => index > layer);
    const found = later.length === 0 ? new Map<number, Map<string, FeatureRow>>() : await this.lookup(ids, signal, { version }, later);
    return ids.map((id, index) => ![...found.values()].some((held) => held.has(id)) && !(this.masking && isTombstone(texts[index])));
  }

  /** Layer by layer from the position after `afterSeq`, each in insertion order, until `limit` rows are shown. */
  async *query(query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureRow[]> {
    if (query.ids) {
      const rows = await this.byIds({ ...query, ids: query.ids }, signal);
      if (rows.length > 0) yield rows;
      return;
    }
    const start = decodePosition(query.afterSeq ?? 0);
    let remaining = query.limit;
    for (let layer = start.layer; layer < this.layers.length && remaining > 0; layer++) {
      const key = this.layers[layer].key;
      let after = layer === start.layer ? start.seq : 0;
      if (this.combination === 'group') {
        for await (const rows of this.storage.features.query(key, this.at(layer, { ...query, afterSeq: after, limit: remaining }), signal)) {
          remaining -= rows.length;
          yield rows.map((row) => ({ seq: encodePosition(layer, row.seq), json: row.json }));
        }
        continue;
      }
      while (remaining > 0) {
        const step = Math.min(remaining, STEP_ROWS);
        const rows = await rowsOf(this.storage.features.query(key, this.at(layer, { ...query, afterSeq: after, limit: step }), signal));
        if (rows.length === 0) break;
        const shown = (await this.resolve(layer, rows, query, signal)).slice(0, remaining);
        remaining -= shown.length;
        if (shown.length > 0) yield shown;
        after = rows[rows.length - 1].seq;
        if (rows.length < step) break;
      }
    }
  }

  /** A group without ids reads each layer's joined texts as they are; the other reads join the shown rows. */
  async *queryText(query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureTextPage> {
    if (this.combination === 'group' && !query.ids) {
      yield* this.groupTexts(query, signal);
      return;
    }
    for await (const rows of this.query(query, signal)) {
      yield { text: rows.map((row) => row.json).join(','), count: rows.length, lastSeq: rows[rows.length - 1].seq };
    }
  }

  /**
   * The layers' page texts one layer after the other, up to the limit. An area read (bbox, tile, spatial) starts
   * every layer's read at once, each up to the whole limit: such answers seldom reach the limit, and the layers'
   * queries then overlap instead of adding up. A page that would pass the limit is read again, up to what is left.
   * Iterate and search read a layer only once the ones before it are done: their pages usually fill the limit.
   */
  private async *groupTexts(query: FeatureQuery, signal?: AbortSignal): AsyncIterable<FeatureTextPage> {
    const start = decodePosition(query.afterSeq ?? 0);
    const layers = this.layers.map((_, index) => index).filter((index) => index >= start.layer);
    const open = (layer: number, after: number, limit: number): AsyncIterator<FeatureTextPage> =>
      this.storage.features.queryText(this.layers[layer].key, this.at(layer, { ...query, afterSeq: after, limit }), signal)[Symbol.asyncIterator]();
    const started = new Map<number, { pages: AsyncIterator<FeatureTextPage>; first: Promise<IteratorResult<FeatureTextPage>> }>();
    if (query.spatial && layers.length > 1) {
      for (const layer of layers) {
        const pages = open(layer, layer === start.layer ? start.seq : 0, query.limit);
        const first = pages.next();
        // Awaited in its turn; a failure before then must not count as unhandled.
        first.catch(() => undefined);
        started.set(layer, { pages, first });
      }
    }
    let remaining = query.limit;
    try {
      for (const layer of layers) {
        if (remaining <= 0) break;
        let after = layer === start.layer ? start.seq : 0;
        const early = started.get(layer);
        started.delete(layer);
        let pages = early?.pages ?? open(layer, after, remaining);
        let result = await (early?.first ?? pages.next());
        while (!result.done) {
          const page = result.value;
          if (page.count > remaining) {
            await pages.return?.();
            pages = open(layer, after, remaining);
          } else {
            remaining -= page.count;
            after = page.lastSeq;
            if (page.count > 0) yield { ...page, lastSeq: encodePosition(layer, page.lastSeq) };
            if (remaining <= 0) {
              await pages.return?.();
              break;
            }
          }
          result = await pages.next();
        }
      }
    } finally {
      // Reads started for layers the answer no longer needs (the limit was reached, or the client went away).
      for (const { pages, first } of started.values()) {
        await first.catch(() => undefined);
        await pages.return?.();
      }
    }
  }

  async count(filter: FeatureFilter, signal?: AbortSignal): Promise<number> {
    if (this.combination === 'group') {
      const counts = await Promise.all(this.layers.map((layer) => this.storage.features.count(layer.key, filter, signal)));
      return counts.reduce((sum, count) => sum + count, 0);
    }
    return this.countUpTo({ ...filter, limit: Number.MAX_SAFE_INTEGER }, signal);
  }

  /**
   * Each layer read in the sort order by its engine, up to `limit` rows it shows, then merged k-way (sorted-merge.ts).
   * A merge sorts by id alone (`mergedSortedPage`).
   */
  async sortedPage(query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    if (this.combination === 'merge') return this.mergedSortedPage(query, signal);
    const start = query.after ? positionOf(query.after) : undefined;
    const lists = await Promise.all(this.layers.map((_, layer) => this.sortedRows(layer, query, start, signal)));
    return mergeSorted(query.sort, lists, query.limit);
  }

  /**
   * A merge sorted by id alone: a merged feature has its id in every layer holding a version of it, so each layer's
   * matches in id order, up to `limit` of them, merged k-way with equal ids taken once, are the page's ids in order,
   * as the merge shows a feature when one of its versions matches (the unsorted read's rule). The page's texts are
   * then the merged versions, as the unsorted read shows them. The handle resumes after the last id in every layer
   * (the id key's number is 0 here: no layer is named, as each id is shown once).
   * Any other key's value comes from several versions, so no layer's order places the merged feature: a 400.
   */
  private async mergedSortedPage(query: SortedQuery, signal?: AbortSignal): Promise<SortedPage> {
    const [key, ...others] = query.sort;
    if (others.length > 0 || key.path.length !== 1 || key.path[0] !== 'id') {
      throw hubError('ogcInvalidSortby', { problem: 'a virtual space that merges its layers sorts by id alone (sortby=id or -id): the values of other keys come from several versions of a feature, so no layer\'s order places it (docs/ogc-filtering.md)' });
    }
    const { after: _after, ...first } = query;
    const texts: string[] = [];
    const keys: SortValue[][] = [];
    let after = query.after ? positionOf(query.after).keys : undefined;
    // A second round only when features were deleted from every layer between the sorted reads and the lookup.
    while (texts.length < query.limit) {
      const limit = query.limit - texts.length;
      const lists = await Promise.all(this.layers.map(async (layer, index): Promise<LayerRow[]> => {
        const page = await this.storage.features.sortedPage(layer.key, this.at(index, { ...first, ...(after ? { after } : {}), limit }), signal);
        return page.texts.map((text, row) => ({ layer: index, text, keys: page.keys[row] }));
      }));
      const page = mergeSorted(query.sort, lists, limit, true);
      const ids = page.keys.map((rowKeys) => rowKeys[0][2]);
      const found = await this.lookup(ids, signal, { version: query.version });
      ids.forEach((id, index) => {
        const shown = this.effective(this.layers.flatMap((_, layer) => {
          const row = found.get(layer)?.get(id);
          return row ? [{ layer, row }] : [];
        }));
        if (shown) {
          texts.push(shown.json);
          keys.push(page.keys[index]);
        }
      });
      if (ids.length < limit) break;
      // The engines' own keys: `page.last` names a layer in the id key's number, which they would compare.
      after = page.keys[page.keys.length - 1];
    }
    const last = keys[keys.length - 1];
    return { texts, keys, ...(last ? { last } : {}) };
  }

  /** Up to `limit` rows of one layer the read shows, in the sort order after `start`, read in steps as `query` reads them. */
  private async sortedRows(layer: number, query: SortedQuery, start: LayerPosition | undefined, signal?: AbortSignal): Promise<LayerRow[]> {
    const { key } = this.layers[layer];
    const { after: _after, ...first } = query;
    const rows: LayerRow[] = [];
    if (start && this.combination === 'group' && layer > start.layer) {
      // The same id as the last row, in a later layer and equal on every key, comes right after it.
      const id = start.keys[start.keys.length - 1][2];
      const same = await this.storage.features.sortedPage(key, this.at(layer, { ...first, properties: [...(query.properties ?? []), { path: ['id'], op: 'eq', values: [id] }], limit: 1 }), signal);
      if (same.keys.length > 0 && compareKeys(query.sort, same.keys[0], start.keys) === 0) rows.push({ layer, text: same.texts[0], keys: same.keys[0] });
    }
    let after = start?.keys;
    while (rows.length < query.limit) {
      // Each step sorts the layer's matches again: an override step reads twice what is missing, as some rows are hidden.
      const missing = query.limit - rows.length;
      const step = Math.min(this.combination === 'group' ? missing : 2 * missing, STEP_ROWS);
      const page = await this.storage.features.sortedPage(key, this.at(layer, { ...first, ...(after ? { after } : {}), limit: step }), signal);
      const shown = this.combination === 'group' ? page.texts.map(() => true)
        : await this.overridden(layer, page.texts.map((text) => storedFeatureId(text)), page.texts, query.version, signal);
      page.texts.forEach((text, index) => {
        if (shown[index] && rows.length < query.limit) rows.push({ layer, text, keys: page.keys[index] });
      });
      if (page.texts.length < step || !page.last) break;
      after = page.last;
    }
    return rows;
  }

  async countUpTo(query: Omit<FeatureQuery, 'ids'>, signal?: AbortSignal): Promise<number> {
    let count = 0;
    if (this.combination === 'group') {
      for (const [index, layer] of this.layers.entries()) {
        if (count >= query.limit) break;
        count += await this.storage.features.countUpTo(layer.key, this.at(index, { ...query, limit: query.limit - count }), signal);
      }
      return count;
    }
    for await (const rows of this.query(query, signal)) count += rows.length;
    return count;
  }

  /** Encoded here from the shown features: no engine sees them together. */
  vectorTile(query: FeatureQuery, tile: VectorTileRequest, signal?: AbortSignal): Promise<Buffer> {
    return vectorTileOf(this.query(query, signal), tile);
  }

  /** A composite space's versions are its own layer's (see `at`); a virtual space has none. */
  versions(): Promise<SpaceVersions> {
    return this.own < 0 ? Promise.reject(hubError('versionOfLayers')) : this.storage.features.versions(this.space.key);
  }

  /** Every kept state of a feature is a list of one space's states: through layers there is no one list. */
  featureStates(): Promise<FeatureRow[]> {
    return Promise.reject(hubError(this.own < 0 ? 'versionOfLayers' : 'statesOfLayers'));
  }

  /** Tags are written on plain spaces only (space-scope.ts, `history`): a layered space has none to name a version. */
  tag(): Promise<TagRecord | undefined> {
    return Promise.reject(hubError('historyOfLayers'));
  }

  tags(): Promise<TagRecord[]> {
    return Promise.reject(hubError('historyOfLayers'));
  }

  /**
   * A group sums its layers' statistics (API.md 3.7). The other combinations read what they show: the count and
   * data size exactly, the rest from the first STATISTICS_SAMPLE features (estimated when there are more).
   */
  async statistics(options: StatisticsOptions): Promise<SpaceStatistics> {
    if (this.combination === 'group') return sumStatistics(await Promise.all(this.layers.map((layer) => this.storage.features.statistics(layer.key, options))));
    return statisticsOfRead(this.query({ limit: Number.MAX_SAFE_INTEGER }));
  }
}

/** The statistics of a group: counts and sizes summed, bounds and geometry types united, tag and property counts summed by key. */
function sumStatistics(all: SpaceStatistics[]): SpaceStatistics {
  let bbox: BBox | null = null;
  const tags = new Map<string, number>();
  const properties = new Map<string, PropertyStatistic>();
  for (const stats of all) {
    if (stats.bbox) {
      const [w, s, e, n] = stats.bbox;
      bbox = bbox ? [Math.min(bbox[0], w), Math.min(bbox[1], s), Math.max(bbox[2], e), Math.max(bbox[3], n)] : [w, s, e, n];
    }
    for (const tag of stats.tags) tags.set(tag.key, (tags.get(tag.key) ?? 0) + tag.count);
    for (const property of stats.properties) {
      const known = properties.get(property.key);
      properties.set(property.key, known ? { ...known, count: known.count + property.count } : { ...property });
    }
  }
  return {
    count: all.reduce((sum, stats) => sum + stats.count, 0),
    dataSize: all.reduce((sum, stats) => sum + stats.dataSize, 0),
    bbox,
    geometryTypes: [...new Set(all.flatMap((stats) => stats.geometryTypes))].sort(),
    tags: [...tags].map(([key, count]) => ({ key, count })).sort(byCountThenKey),
    properties: [...properties.values()].sort(byCountThenKey),
    estimated: all.some((stats) => stats.estimated),
  };
}
