// The query parameters routes declare in the route table: one schema and description each, for the API document and RawQuery.
import { MAX_LIMIT } from './query/raw-query.js';

export interface QueryParameter {
  schema: Record<string, unknown>;
  description: string;
}

const text = (description: string): QueryParameter => ({ schema: { type: 'string' }, description });
const flag = (description: string): QueryParameter => ({ schema: { type: 'boolean' }, description });
const integer = (description: string, minimum?: number, maximum?: number): QueryParameter =>
  ({ schema: { type: 'integer', ...(minimum === undefined ? {} : { minimum }), ...(maximum === undefined ? {} : { maximum }) }, description });
const list = (description: string): QueryParameter => ({ schema: { type: 'array', items: { type: 'string' } }, description });
const oneOf = (description: string, values: string[]): QueryParameter => ({ schema: { type: 'string', enum: values }, description });
const coordinate = (axis: string, limit: number): QueryParameter =>
  ({ schema: { type: 'number', minimum: -limit, maximum: limit }, description: `${axis} in decimal degrees (WGS 84).` });

/**
 * Every query parameter a handler reads, by name. A name ending in `*` is a family (`p.name=value`). RawQuery refuses
 * to read a parameter its route does not declare, so the document generated from the table lists what each route reads.
 */
export const QUERY_PARAMETERS = {
  access_token: text('The access token, when no Authorization header is sent (API.md 1.3).'),
  limit: integer(`The most features, cells, spaces or projects to return (API.md 1.8): at most ${MAX_LIMIT} on the hub, 10,000 (default 10) for OGC items.`, 1, MAX_LIMIT),
  handle: text('Where a page continues: the handle of the previous page.'),
  version: text('The version to read at (ADR 002): a number, HEAD (the default), a tag id, or * for every kept state of a feature (by id). On DELETE /changesets: lt=N.'),
  versionRef: text('The same as version; on /changesets a range a..b of versions after a up to b (numbers, HEAD or tag ids).'),
  startVersion: integer('The first version of the changesets (inclusive; default: the oldest kept).', 0),
  endVersion: integer('The last version of the changesets (inclusive; default: HEAD).', 0),
  type: oneOf('The tile scheme of changed tiles: their ids as the tile route of that type names them.', ['web', 'quadkey', 'here', 'tms']),
  level: text('The tile level of changed tiles: z, or a range a..b of levels.'),
  since: integer('The event stream resumes after this version (as Last-Event-ID does); -1 for every kept version; default: from HEAD on.', -1),
  startTime: text('Only the versions written at or after this time: ms since the epoch, or an ISO 8601 date.'),
  endTime: text('Only the versions written at or before this time: ms since the epoch, or an ISO 8601 date.'),
  pageToken: text('Where a page of changesets continues: the nextPageToken of the previous page.'),
  nextPageToken: text('The same as handle.'),
  id: list('Feature ids, comma-separated or repeated.'),
  tags: text('Tag expression: "," separates alternatives, "+" tags that must all be present (API.md 1.2); "*" deletes all.'),
  author: list('Only features last written by one of these authors (accounts, or token cids), comma-separated or repeated; on /changesets the versions one author wrote.'),
  'p.*': { schema: { type: 'object', additionalProperties: { type: 'string' } }, description: 'Property filters: p.<path><operator><values> (and f.<member>), API.md 5.5.' },
  selection: list('Members to return: p.<path> for properties, other names for root members (API.md 5.1).'),
  force2D: flag('Return 2D positions.'),
  addTags: list('Tags to add to every written feature.'),
  removeTags: list('Tags to remove from every written feature.'),
  prefixId: text('A prefix for the ids of written features.'),
  transactional: flag('All features are written, or none (default true).'),
  e: oneOf('What to do with an existing feature.', ['patch', 'replace', 'merge', 'delete', 'retain', 'error']),
  ne: oneOf('What to do with a missing feature.', ['create', 'retain', 'error']),
  cr: oneOf('How to resolve a uuid conflict.', ['error', 'retain', 'replace']),
  owner: text('me (default), others, * or an owner id (API.md 3.6).'),
  includeRights: flag('Add each space\'s granted actions as "rights".'),
  includeConnectors: flag('Include storage, listeners and processors where the token may see them.'),
  contentUpdatedAt: text('A comparison on contentUpdatedAt: =, !=, >, >=, <, <=, =gt=, =gte=, =lt=, =lte= and timestamps in ms.'),
  west: coordinate('The west edge', 180),
  south: coordinate('The south edge', 90),
  east: coordinate('The east edge', 180),
  north: coordinate('The north edge', 90),
  lat: coordinate('Latitude', 90),
  lon: coordinate('Longitude', 180),
  clip: flag('Cut geometries to the area.'),
  margin: integer('Pixels (at 256 per tile) to enlarge the tile by.', 0, 1024),
  mode: oneOf('raw, or viz for display.', ['raw', 'viz']),
  vizSampling: oneOf('Sampling strength in viz mode.', ['low', 'med', 'high', 'off']),
  tweaks: oneOf('Display tweaks (API.md 6.3).', ['sampling', 'simplification', 'ensure']),
  'tweaks.strength': text('low, lowmed, med, medhigh, high or 1 to 100.'),
  'tweaks.algorithm': text('The algorithm of a tweak.'),
  'tweaks.samplingthreshold': integer('Thousands of features above which sampling starts.', 10, 100),
  'tweaks.defaultselection': flag('Keep the properties in viz mode.'),
  clustering: oneOf('Answer with cells instead of features (API.md 6.4).', ['hexbin', 'quadbin']),
  'clustering.*': { schema: { type: 'object', additionalProperties: { type: 'string' } }, description: 'Clustering options: clustering.<name>=<value> (API.md 6.4).' },
  radius: integer('Metres on the spheroid; negative shrinks a polygon.', -20_100_000, 20_100_000),
  refSpaceId: text('The space of the feature to search around.'),
  refFeatureId: text('The feature to search around.'),
  h3Index: text('An H3 cell to search in.'),
  paginate: flag('Answer {projects, handle} pages instead of an array.'),
  published: flag('List every account\'s published projects.'),
  f: oneOf('Answer format; jsonfg (JSON-FG) on items and one item (docs/jsonfg.md); jsonseq (GeoJSON text sequence), csv and fgb (FlatGeobuf) on items only (docs/output-formats.md).', ['json', 'html', 'jsonfg', 'jsonseq', 'csv', 'fgb']),
  bbox: { schema: { type: 'array', minItems: 4, maxItems: 6, items: { type: 'number' } }, description: 'west,south,east,north (or with heights) in CRS84.' },
  'bbox-crs': text('The CRS of bbox: CRS84 only.'),
  crs: text('The CRS of the answer: CRS84 only.'),
  datetime: text('An instant or interval on updatedAt (RFC 3339).'),
  filter: text('A CQL2 filter over the queryables (OGC API Features Part 3, docs/ogc-filtering.md).'),
  // cql-text is the drafts' name: GDAL 3.6 filters on the server only when the enum holds it.
  'filter-lang': oneOf('The language of filter: cql2-text (default) or cql2-json.', ['cql2-text', 'cql2-json', 'cql-text']),
  'filter-crs': text('The CRS of geometries in filter: CRS84 only.'),
  sortby: text('Sort keys, +name ascending (or name), -name descending, comma-separated, over the sortables (OGC API Features Part 8, docs/ogc-filtering.md).'),
  '*': { schema: { type: 'object', additionalProperties: { type: 'string' } }, description: 'Property equality filters: <property>=<value>.' },
} satisfies Record<string, QueryParameter>;

export type QueryName = keyof typeof QUERY_PARAMETERS;
