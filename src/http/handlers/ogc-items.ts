// Handlers of OGC API Features items: keyset pages of a collection's features, one item, and the Part 4 writes.
import type { ItemsPage } from '../../hub/ogc/ogc-service.js';
import { ogcInputFeature } from '../../hub/ogc/ogc-feature-input.js';
import { ogcFeatureTexts } from '../../hub/ogc/ogc-feature-text.js';
import { bodyEtag } from '../../core/body-etag.js';
import { bodyStream } from '../body/body-stream.js';
import { readJsonObject } from '../body/json-body.js';
import { checkCrs, ogcBbox, ogcDatetime, ogcFilter, ogcHandle, ogcLimit, ogcPropertyFilters, ogcSortby } from '../query/ogc-parameters.js';
import { featureDetail, featureRows, type Link, linkList, page } from '../reply/ogc-html.js';
import { JSON_FG_TYPE, jsonFgItem, jsonFgRoot } from '../reply/jsonfg-document.js';
import { sendFeatureCollection, sendFeatureText, sendTextRead } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { versionRefOf } from '../query/version-ref.js';
import { type FeatureFormat, type LinkBase, linkBase, ogcItemsFormat, ogcReadOptions } from './ogc-request.js';
import { type FileFormat, fileFormatType, linkHeader, sendFeatureFile } from '../reply/feature-formats.js';

const GEOJSON = 'application/geo+json';
const HTML_TYPE = 'text/html';

const itemsPath = (spaceId: string) => `/collections/${encodeURIComponent(spaceId)}/items`;

/** The request's own parameters, without `f`, `handle` and the token, for the links of a page. */
function pageParameters(context: HandlerContext): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(context.request.url.split('?')[1] ?? '')) {
    const key = name.toLowerCase();
    if (key !== 'f' && key !== 'handle' && key !== 'access_token' && !(name in kept)) kept[name] = value;
  }
  return kept;
}

/** The media type of a feature answer in each format. */
const typeOf = (format: FeatureFormat | FileFormat): string =>
  format === 'json' ? GEOJSON : format === 'html' ? HTML_TYPE : format === 'jsonfg' ? JSON_FG_TYPE : fileFormatType(format);

/** The formats a page in `format` links to as `alternate`: the documents' other formats (the file formats link none). */
const ALTERNATES: Record<FeatureFormat, FeatureFormat[]> = { json: ['html', 'jsonfg'], html: ['json', 'jsonfg'], jsonfg: ['json', 'html'] };

/**
 * `self`, the other formats, `collection`, and `next` when the page came full (keyset: the handle is its last
 * sequence, or its sort position). A file format's page links to itself and its next page in that format.
 */
function pageLinks(context: HandlerContext, base: LinkBase, result: ItemsPage, format: FeatureFormat | FileFormat): Link[] {
  const { spaceId } = context.params;
  const parameters = pageParameters(context);
  const given = context.query.first('handle');
  const here = given ? { ...parameters, handle: given } : parameters;
  const type = typeOf(format);
  const alternates = format === 'json' || format === 'html' || format === 'jsonfg' ? ALTERNATES[format] : [];
  const links: Link[] = [
    { href: base.href(itemsPath(spaceId), { ...here, f: format }), rel: 'self', type, title: 'this page' },
    ...alternates.map((other): Link => ({ href: base.href(itemsPath(spaceId), { ...here, f: other }), rel: 'alternate', type: typeOf(other), title: `this page as ${other}` })),
    { href: base.href(`/collections/${encodeURIComponent(spaceId)}`), rel: 'collection', type: 'application/json', title: 'the collection' },
  ];
  const handle = result.next();
  if (handle !== undefined) {
    const next = { ...parameters, handle, ...(format !== 'json' ? { f: format } : {}) };
    links.push({ href: base.href(itemsPath(spaceId), next), rel: 'next', type, title: 'next page' });
  }
  return links;
}

/**
 * One page: the stored feature texts stream as for iterate (no parse per feature), the links and
 * `numberReturned` follow the features. `numberMatched` is not given: counting would cost a second query per page.
 */
export async function ogcItems(context: HandlerContext): Promise<unknown> {
  const format = ogcItemsFormat(context);
  const limit = ogcLimit(context.query);
  checkCrs(context.query);
  const sortby = ogcSortby(context.query);
  const query = {
    bbox: ogcBbox(context.query),
    properties: [...ogcPropertyFilters(context.query), ...ogcDatetime(context.query)],
    filter: ogcFilter(context.query),
    ...(sortby ? { sortby, afterSeq: 0, handle: context.query.first('handle') } : { afterSeq: ogcHandle(context.query) }),
    limit,
  };
  const base = linkBase(context);
  const result = await context.hub.ogc.items(callerOf(context), context.params.spaceId, query, ogcReadOptions(context, format), versionRefOf(context.query));
  if (format === 'json' || format === 'jsonfg') {
    const trailer = () => ({ links: pageLinks(context, base, result, format), numberReturned: result.returned() });
    // The time of the answer is not part of what it holds: left out of the ETag, or no page would ever be answered 304.
    const untagged = () => ({ timeStamp: new Date().toISOString() });
    const form = format === 'jsonfg' ? { type: JSON_FG_TYPE, head: jsonFgRoot(context.params.spaceId) } : undefined;
    return sendFeatureCollection(context.request, context.reply, { ...result, trailer }, untagged, form);
  }
  if (format !== 'html') {
    const links = () => pageLinks(context, base, result, format).filter((link) => link.rel !== 'alternate').map((link) => linkHeader(link.href, link.rel, link.type));
    return sendFeatureFile(context.reply, { format, pages: result.features, links, linksFirst: sortby !== undefined });
  }
  const texts: string[] = [];
  for await (const text of result.features) texts.push(text.toString());
  const features = JSON.parse(`[${texts.filter((text) => text.length > 0).join(',')}]`) as Array<{ id?: unknown }>;
  const itemHref = (id: string) => base.href(`${itemsPath(context.params.spaceId)}/${encodeURIComponent(id)}`, { f: 'html' });
  const body = `<p>${features.length} features</p>${featureRows(features, itemHref)}${linkList(pageLinks(context, base, result, 'html'))}`;
  return sendTextRead(context.request, context.reply, page(`Items of ${context.params.spaceId}`, body), HTML_TYPE);
}

export async function ogcItem(context: HandlerContext): Promise<unknown> {
  const format = ogcItemsFormat(context, 'item');
  const { spaceId, featureId } = context.params;
  const feature = await context.hub.ogc.item(callerOf(context), spaceId, featureId, ogcReadOptions(context, format), versionRefOf(context.query));
  if (format === 'json') return sendFeatureText(context.request, context.reply, feature.json, feature.etag, feature.cacheTTL);
  if (format === 'jsonfg') {
    const document = jsonFgItem(spaceId, feature.json);
    return sendFeatureText(context.request, context.reply, document, bodyEtag(document), feature.cacheTTL, JSON_FG_TYPE);
  }
  const base = linkBase(context);
  const links: Link[] = [
    { href: base.href(`${itemsPath(spaceId)}/${encodeURIComponent(featureId)}`, { f: 'json' }), rel: 'alternate', type: GEOJSON, title: 'this item as GeoJSON' },
    { href: base.href(itemsPath(spaceId), { f: 'html' }), rel: 'collection', type: HTML_TYPE, title: 'the items of the collection' },
  ];
  return sendTextRead(context.request, context.reply, page(`Item ${featureId}`, featureDetail(JSON.parse(feature.json) as object) + linkList(links)), HTML_TYPE);
}

const WRITE_DEFAULTS = { addTags: [], removeTags: [], prefixId: '', transactional: true, respond: true };

/** Part 4 create: the server keeps the body's id or assigns one; 201 with the new item's location. */
export async function ogcCreateItem(context: HandlerContext): Promise<unknown> {
  const feature = await readJsonObject(bodyStream(context.request.raw, context.maxBody), 'invalidJsonFeatures');
  const { spaceId } = context.params;
  const result = await context.hub.writes.writeCollection({
    caller: callerOf(context), spaceId, body: { type: 'Feature', feature: ogcInputFeature(feature) }, onExists: 'error', onNotExists: 'create', onConflict: 'error', ...WRITE_DEFAULTS,
  });
  const id = result.inserted[0];
  return context.reply.code(201).header('location', `${linkBase(context).root}${itemsPath(spaceId)}/${encodeURIComponent(id)}`)
    .type(GEOJSON).send(ogcFeatureTexts(result.features[0]));
}

/** Part 4 replace (PUT, which creates a missing item as the hub's PUT does) and update (PATCH, a merge patch). */
async function writeItem(context: HandlerContext, mode: 'put' | 'patch'): Promise<unknown> {
  const body = await readJsonObject(bodyStream(context.request.raw, context.maxBody), 'invalidJsonFeatures');
  const { spaceId, featureId } = context.params;
  const json = await context.hub.writes.writeOne({ caller: callerOf(context), spaceId, featureId, body: ogcInputFeature(body), ...WRITE_DEFAULTS }, mode);
  return context.reply.type(GEOJSON).send(ogcFeatureTexts(json));
}

export const ogcReplaceItem = (context: HandlerContext) => writeItem(context, 'put');
export const ogcUpdateItem = (context: HandlerContext) => writeItem(context, 'patch');

export async function ogcDeleteItem(context: HandlerContext): Promise<unknown> {
  await context.hub.writes.deleteOne(callerOf(context), context.params.spaceId, context.params.featureId);
  return context.reply.code(204).send();
}
