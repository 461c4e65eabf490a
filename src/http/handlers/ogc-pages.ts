// Handlers of the OGC API Features documents: landing page, conformance, API definition, collections, queryables and sortables.
import type { Collection } from '../../hub/ogc/ogc-service.js';
import { sortablesOf } from '../../hub/ogc/ogc-sort.js';
import { apiDocument, type PathItems, queryParameter } from '../api-document.js';
import { CRS84 } from '../query/ogc-parameters.js';
import { collectionRows, escapeHtml, type Link, linkList, page, queryableRows } from '../reply/ogc-html.js';
import { JSON_FG_CORE, JSON_FG_TYPE } from '../reply/jsonfg-document.js';
import { sendTextRead } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { routes } from '../routes.js';
import { type LinkBase, linkBase, type OgcFormat, ogcFormat } from './ogc-request.js';

const JSON_TYPE = 'application/json';
const GEOJSON = 'application/geo+json';
const HTML_TYPE = 'text/html';
const OPENAPI = 'application/vnd.oai.openapi+json;version=3.0';

/**
 * The conformance classes served: Part 1 core, GeoJSON, HTML and OpenAPI 3.0; Part 4 create/replace/delete and update;
 * Part 3 filtering with CQL2 text and JSON, basic CQL2 with LIKE, BETWEEN and IN, and the spatial functions; Part 8 sorting (docs/ogc-filtering.md);
 * OGC API Tiles with MVT tilesets of each collection in WebMercatorQuad, and that tile matrix set's definition (docs/vector-tiles.md);
 * JSON-FG core for items and one item (docs/jsonfg.md).
 */
export const CONFORMANCE = [
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/geojson',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/html',
  'http://www.opengis.net/spec/ogcapi-features-1/1.0/conf/oas30',
  'http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/create-replace-delete',
  'http://www.opengis.net/spec/ogcapi-features-4/1.0/conf/update',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/queryables',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/filter',
  'http://www.opengis.net/spec/ogcapi-features-3/1.0/conf/features-filter',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-text',
  'http://www.opengis.net/spec/cql2/1.0/conf/cql2-json',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-cql2',
  'http://www.opengis.net/spec/cql2/1.0/conf/advanced-comparison-operators',
  'http://www.opengis.net/spec/cql2/1.0/conf/case-insensitive-comparison',
  'http://www.opengis.net/spec/cql2/1.0/conf/accent-insensitive-comparison',
  'http://www.opengis.net/spec/cql2/1.0/conf/arithmetic',
  'http://www.opengis.net/spec/cql2/1.0/conf/basic-spatial-functions',
  'http://www.opengis.net/spec/cql2/1.0/conf/spatial-functions',
  'http://www.opengis.net/spec/ogcapi-features-8/1.0/conf/sorting',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/core',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tileset',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/tilesets-list',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/geodata-tilesets',
  'http://www.opengis.net/spec/ogcapi-tiles-1/1.0/conf/mvt',
  'http://www.opengis.net/spec/tms/2.0/conf/tilematrixset',
  'http://www.opengis.net/spec/tms/2.0/conf/json-tilematrixset',
  JSON_FG_CORE,
];

/** The link to this document in the other format, after `self`. */
function selfLinks(base: LinkBase, path: string, format: OgcFormat, jsonType = JSON_TYPE): Link[] {
  const json = { href: base.href(path, { f: 'json' }), type: jsonType };
  const html = { href: base.href(path, { f: 'html' }), type: HTML_TYPE };
  return format === 'json'
    ? [{ ...json, rel: 'self', title: 'this document' }, { ...html, rel: 'alternate', title: 'this document as HTML' }]
    : [{ ...html, rel: 'self', title: 'this document' }, { ...json, rel: 'alternate', title: 'this document as JSON' }];
}

function send(context: HandlerContext, format: OgcFormat, body: object, html: () => string): unknown {
  return format === 'json'
    ? sendTextRead(context.request, context.reply, JSON.stringify(body), JSON_TYPE)
    : sendTextRead(context.request, context.reply, html(), HTML_TYPE);
}

export async function ogcLanding(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const links: Link[] = [
    ...selfLinks(base, '', format),
    { href: base.href('/api'), rel: 'service-desc', type: OPENAPI, title: 'the API definition' },
    { href: base.href('/api', { f: 'html' }), rel: 'service-doc', type: HTML_TYPE, title: 'the API documentation' },
    { href: base.href('/conformance'), rel: 'conformance', type: JSON_TYPE, title: 'conformance classes' },
    { href: base.href('/collections'), rel: 'data', type: JSON_TYPE, title: 'collections' },
    { href: base.href('/tileMatrixSets'), rel: 'http://www.opengis.net/def/rel/ogc/1.0/tiling-schemes', type: JSON_TYPE, title: 'tile matrix sets' },
  ];
  const title = 'Spatial Data Hub: OGC API Features';
  const description = 'The spaces of this hub as OGC API Features collections.';
  return send(context, format, { title, description, links }, () => page(title, `<p>${description}</p>${linkList(links)}`));
}

export async function ogcConformance(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  return send(context, format, { conformsTo: CONFORMANCE }, () => page('Conformance', `<ul>${CONFORMANCE.map((uri) => `<li>${escapeHtml(uri)}</li>`).join('')}</ul>`));
}

/**
 * One items path per collection the caller may read, listing its queryables as query parameters: that is where
 * GDAL's OAPIF driver looks for the properties it may filter on the server. The rest of the document comes from
 * the route table (api-document.ts).
 */
function collectionItemPaths(collections: Collection[]): PathItems {
  const standard = (['limit', 'bbox', 'bbox-crs', 'crs', 'datetime', 'filter', 'filter-lang', 'filter-crs', 'f'] as const).map(queryParameter);
  return Object.fromEntries(collections.map((collection) => [`/collections/${collection.id}/items`, {
    get: {
      summary: `Items of ${collection.id}`,
      operationId: `getItemsOf${collections.indexOf(collection)}`,
      tags: ['OGC API Features'],
      parameters: [...standard, ...collection.queryables
        .filter((queryable) => queryable.path[0] === 'properties' && queryable.path.length === 2)
        .filter((queryable) => !standard.some((parameter) => parameter.name === queryable.name))
        .map((queryable) => ({ name: queryable.name, in: 'query', required: false, schema: queryable.type ? { type: queryable.type } : {} }))],
      responses: { '2XX': { description: 'Success' } },
    },
  }]));
}

/** Every collection the caller may read, with its extent and queryables. */
async function readableCollections(context: HandlerContext): Promise<Collection[]> {
  const collections: Collection[] = [];
  for await (const found of context.hub.ogc.collections(callerOf(context))) collections.push(...found);
  return collections;
}

export async function ogcApi(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const body = apiDocument(routes, base.origin, context.hub.info.version, collectionItemPaths(await readableCollections(context)));
  const paths = Object.keys((body as { paths: object }).paths);
  return format === 'json'
    // With its charset given, Fastify leaves the type as written; GDAL needs `;version=3.0` unquoted.
    ? sendTextRead(context.request, context.reply, JSON.stringify(body), `${OPENAPI};charset=utf-8`)
    : sendTextRead(context.request, context.reply, page('API', `<p>OpenAPI 3.0 definition: <a href="${escapeHtml(base.href('/api', { f: 'json' }))}">JSON</a></p><ul>${paths.map((path) => `<li>${escapeHtml(path)}</li>`).join('')}</ul>`), HTML_TYPE);
}

/** A collection as OGC describes it, with its items link. */
function collectionBody(base: LinkBase, collection: Collection, format: OgcFormat, self: boolean): object {
  const path = `/collections/${encodeURIComponent(collection.id)}`;
  const links: Link[] = [
    ...(self ? selfLinks(base, path, format) : [{ href: base.href(path), rel: 'collection', type: JSON_TYPE, title: collection.title }]),
    { href: base.href(`${path}/items`), rel: 'items', type: GEOJSON, title: 'items' },
    { href: base.href(`${path}/items`, { f: 'html' }), rel: 'items', type: HTML_TYPE, title: 'items as HTML' },
    { href: base.href(`${path}/items`, { f: 'jsonfg' }), rel: 'items', type: JSON_FG_TYPE, title: 'items as JSON-FG' },
    { href: base.href(`${path}/queryables`), rel: 'http://www.opengis.net/def/rel/ogc/1.0/queryables', type: 'application/schema+json', title: 'queryables' },
    { href: base.href(`${path}/sortables`), rel: 'http://www.opengis.net/def/rel/ogc/1.0/sortables', type: 'application/schema+json', title: 'sortables' },
    { href: base.href(`${path}/tiles`), rel: 'http://www.opengis.net/def/rel/ogc/1.0/tilesets-vector', type: JSON_TYPE, title: 'vector tilesets' },
  ];
  return {
    id: collection.id,
    title: collection.title,
    ...(collection.description ? { description: collection.description } : {}),
    ...(collection.extent ? { extent: { spatial: { bbox: [collection.extent], crs: CRS84 } } } : {}),
    itemType: 'feature',
    crs: [CRS84],
    links,
  };
}

const collectionLinks = (base: LinkBase, collection: Collection) => {
  const path = `/collections/${encodeURIComponent(collection.id)}`;
  return { collection, href: base.href(path, { f: 'html' }), items: base.href(`${path}/items`, { f: 'html' }) };
};

export async function ogcCollections(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const collections = await readableCollections(context);
  const body = { links: selfLinks(base, '/collections', format), collections: collections.map((collection) => collectionBody(base, collection, format, false)) };
  return send(context, format, body, () => page('Collections', collectionRows(collections.map((collection) => collectionLinks(base, collection)))));
}

export async function ogcCollection(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const collection = await context.hub.ogc.collection(callerOf(context), context.params.spaceId);
  const body = collectionBody(base, collection, format, true);
  return send(context, format, body, () => page(collection.title, `${collectionRows([collectionLinks(base, collection)])}${linkList((body as { links: Link[] }).links)}`));
}

/** The queryables (Part 3) or sortables (Part 8: the queryables but the geometry) of a collection, as JSON Schema. */
async function schemaOf(context: HandlerContext, kind: 'queryables' | 'sortables'): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const { spaceId } = context.params;
  const { queryables: all } = await context.hub.ogc.collection(callerOf(context), spaceId);
  const queryables = kind === 'queryables' ? all : sortablesOf(all);
  const body = {
    $schema: 'https://json-schema.org/draft/2019-09/schema',
    $id: base.href(`/collections/${encodeURIComponent(spaceId)}/${kind}`),
    type: 'object',
    title: spaceId,
    properties: Object.fromEntries(queryables.map((q) => [q.name, {
      title: q.name, ...(q.type ? { type: q.type } : {}), ...(q.items ? { items: q.items } : {}), ...(q.format ? { format: q.format } : {}),
    }])),
    additionalProperties: kind === 'queryables',
  };
  const json = JSON.stringify(body);
  const title = kind === 'queryables' ? 'Queryables' : 'Sortables';
  return format === 'json'
    ? sendTextRead(context.request, context.reply, json, 'application/schema+json')
    : sendTextRead(context.request, context.reply, page(`${title} of ${spaceId}`, queryableRows(queryables)), HTML_TYPE);
}

export const ogcQueryables = (context: HandlerContext) => schemaOf(context, 'queryables');
export const ogcSortables = (context: HandlerContext) => schemaOf(context, 'sortables');
