// OGC API Features over the hub: spaces as collections, items as keyset pages of iterate, queryables from statistics.
import type { BBox } from '../../geo/bbox.js';
import { HubError, hubError } from '../../core/errors.js';
import type { PropertyCondition } from '../../core/feature-query.js';
import type { Claims } from '../access/claims.js';
import type { FeatureService, SingleFeature } from '../features/feature-service.js';
import type { FeatureCollectionStream } from '../features/read-pipeline.js';
import type { ReadOptions } from '../features/read-pipeline.js';
import type { StatisticsService } from '../features/statistics-service.js';
import type { SpaceService } from '../spaces/space-service.js';
import type { VersionRef } from '../versions/space-versions.js';
import { compileCql2, type FilterTarget } from './cql2/cql2-filter.js';
import { areaOf } from './ogc-area.js';
import { positionOfHandle, type SortbyTerm, sortHandle, sortKeys } from './ogc-sort.js';

/** A space as an OGC collection; `extent` is the statistics bbox (estimated on large spaces), absent when the space is empty. */
export interface Collection {
  id: string;
  title: string;
  description?: string;
  extent?: BBox;
  /** The extent comes from a sample of a large space: features may lie outside it. */
  extentEstimated: boolean;
  /** The properties the space's statistics found (sampled on large spaces), with their types where known. */
  queryables: Queryable[];
}

/** What an items request selects: an area (west ≤ east, or across the antimeridian when west > east), equality filters, a page. */
export interface ItemsQuery {
  bbox?: BBox;
  properties: PropertyCondition[];
  /** A CQL2 filter as its CQL2-JSON tree (cql2-parse.ts), checked against the collection's queryables here. */
  filter?: unknown;
  /** Where the page starts: after this insertion sequence, or with `sortby` the handle of the previous page (empty: the first). */
  afterSeq: number;
  sortby?: SortbyTerm[];
  handle?: string;
  limit: number;
}

/** A page of items; once its features have been consumed, how many came and the handle of the next page (none when it was not full). */
export interface ItemsPage extends FeatureCollectionStream {
  returned(): number;
  next(): string | undefined;
}

/** A property filters may name; `format` as in the queryables of OGC API Features Part 3 (`date-time`, `geometry-any`). */
export interface Queryable extends FilterTarget {
  format?: string;
  /** An array's element type. */
  items?: { type: string };
}

const NAMESPACE = '@ns:com:here:xyz';

/**
 * The hub's own members besides the properties, as OGC items show them (ogc-feature-text.ts): the id, the geometry,
 * the namespace's times and its tags. A property of the same name wins, so that a space holding its own `id` or
 * `updatedAt` property shows and filters on that. Tags are an array, which CQL2 comparisons do not take.
 */
const MEMBERS: Queryable[] = [
  { name: 'id', path: ['id'], kind: 'value', type: 'string' },
  { name: 'geometry', path: ['geometry'], kind: 'geometry', format: 'geometry-any' },
  { name: 'createdAt', path: ['properties', NAMESPACE, 'createdAt'], kind: 'time', type: 'string', format: 'date-time' },
  { name: 'updatedAt', path: ['properties', NAMESPACE, 'updatedAt'], kind: 'time', type: 'string', format: 'date-time' },
  { name: 'tags', path: ['properties', NAMESPACE, 'tags'], kind: 'value', type: 'array', items: { type: 'string' } },
];

/** Statistics reads run at once while listing collections. */
const CONCURRENT_STATISTICS = 4;

const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/** Statistics datatypes as JSON Schema types; anything else is left untyped. */
const SCHEMA_TYPES: Record<string, string> = { string: 'string', number: 'number', boolean: 'boolean', array: 'array', object: 'object' };

/** The statuses of a space's statistics read that leave the space out of the collections list. */
const UNREADABLE = [403, 404, 409, 501];

export class OgcService {
  constructor(private readonly spaces: SpaceService, private readonly features: FeatureService, private readonly statistics: StatisticsService) {}

  /** The collection of one space: its definition as the caller sees it, its extent and queryables from the space statistics. */
  async collection(caller: Claims, spaceId: string): Promise<Collection> {
    const { body, definition: view } = await this.statistics.statistics(caller, spaceId);
    const bbox = body.bbox as { value: number[]; estimated: boolean };
    const properties = (body.properties as { value: Array<{ key: string; datatype?: string }> }).value;
    return {
      id: spaceId,
      title: text(view.title) ?? spaceId,
      description: text(view.description),
      extent: bbox.value.length === 4 ? bbox.value as BBox : undefined,
      extentEstimated: bbox.estimated,
      queryables: [
        ...properties.map((property): Queryable => ({
          name: property.key, path: ['properties', property.key], kind: 'value', type: property.datatype ? SCHEMA_TYPES[property.datatype] : undefined,
        })),
        ...MEMBERS.filter((member) => !properties.some((property) => property.key === member.name)),
      ],
    };
  }

  /**
   * One collection per space the caller may read, a page of spaces at a time; each costs a statistics read, a few
   * at a time so that a long list does not take every database connection. A space whose features cannot be read
   * is left out: deleted meanwhile (404), a virtual space over a space the caller may not read (403) or over one
   * that is gone (409), or a `custom` virtual space (501).
   */
  async *collections(caller: Claims): AsyncIterable<Collection[]> {
    const unlessGone = (error: unknown) => {
      if (error instanceof HubError && UNREADABLE.includes(error.status)) return undefined;
      throw error;
    };
    for await (const page of this.spaces.list(caller, { owner: '*', readableOnly: true })) {
      const found: Collection[] = [];
      for (let start = 0; start < page.length; start += CONCURRENT_STATISTICS) {
        const batch = page.slice(start, start + CONCURRENT_STATISTICS);
        const collections = await Promise.all(batch.map((space) => this.collection(caller, space.id as string).catch(unlessGone)));
        found.push(...collections.filter((collection): collection is Collection => collection !== undefined));
      }
      yield found;
    }
  }

  /**
   * One keyset page of items: in insertion order, the stored texts streaming as iterate's do; with `sortby` in that
   * order, the id last (ogc-sort.ts). `at` stays in the request's parameters, so the `next` link reads the same version.
   * A CQL2 filter or a sort is checked against the collection's queryables, which costs its statistics read.
   */
  async items(caller: Claims, spaceId: string, query: ItemsQuery, options: ReadOptions, at: VersionRef = 'HEAD'): Promise<ItemsPage> {
    const needsQueryables = query.filter !== undefined || query.sortby !== undefined;
    const queryables = needsQueryables ? (await this.collection(caller, spaceId)).queryables : [];
    const compiled = query.filter === undefined ? {} : compileCql2(query.filter, queryables);
    if (compiled.spatial && query.bbox) throw hubError('ogcInvalidFilter', { problem: 'give either bbox or a spatial function in the filter, not both' });
    const spatial = compiled.spatial ?? (query.bbox ? areaOf(query.bbox) : undefined);
    const filter = { properties: query.properties, ...(compiled.where ? { where: compiled.where } : {}), ...(spatial ? { spatial } : {}) };
    if (query.sortby) {
      const terms = query.sortby;
      const sort = sortKeys(terms, queryables);
      const after = query.handle ? positionOfHandle(query.handle, terms, sort.length) : undefined;
      const page = await this.features.sortedPage(caller, spaceId, { ...filter, sort, ...(after ? { after } : {}), limit: query.limit }, options, at);
      const next = page.returned === query.limit && page.last ? sortHandle(terms, page.last) : undefined;
      return { ...page, returned: () => page.returned, next: () => next };
    }
    const page = await this.features.iteratePage(caller, spaceId, filter, query.afterSeq, query.limit, options, at);
    return { ...page, next: () => (page.returned() === query.limit ? String(page.lastSeq()) : undefined) };
  }

  item(caller: Claims, spaceId: string, featureId: string, options: ReadOptions, at: VersionRef = 'HEAD'): Promise<SingleFeature> {
    return this.features.getOne(caller, spaceId, featureId, options, at);
  }
}
