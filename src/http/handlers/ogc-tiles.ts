// Handlers of OGC API Tiles: the WebMercatorQuad tile matrix set, each collection's vector tileset, and its MVT tiles.
import { hubError } from '../../core/errors.js';
import { MAX_VECTOR_TILE_LEVEL } from '../../geo/vector-tile.js';
import { EPSG_3857, tileMatrixLimits, WEB_MERCATOR_QUAD, WEB_MERCATOR_QUAD_URI, WEB_MERCATOR_WORLD, webMercatorQuad } from '../../geo/web-mercator-quad.js';
import type { Collection } from '../../hub/ogc/ogc-service.js';
import { tileFields } from '../../hub/ogc/tile-fields.js';
import { CRS84 } from '../query/ogc-parameters.js';
import { DEFAULT_LIMIT } from '../query/raw-query.js';
import { type Link, linkList, page } from '../reply/ogc-html.js';
import { clientGoneOnUse, sendTextRead, sendVectorTile } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { type LinkBase, linkBase, type OgcFormat, ogcFormat } from './ogc-request.js';
import { etagKey } from './read-parameters.js';
import { tileJsonUrl } from './tile-json.js';

const JSON_TYPE = 'application/json';
const HTML_TYPE = 'text/html';
const MVT = 'application/vnd.mapbox-vector-tile';
const REL = 'http://www.opengis.net/def/rel/ogc/1.0';

const tileMatrixSetPath = `/tileMatrixSets/${WEB_MERCATOR_QUAD}`;
const tilesPath = (spaceId: string) => `/collections/${encodeURIComponent(spaceId)}/tiles`;

/** The document as JSON, or as an HTML page of its links (`htmlLinks`, by default its own). */
function send(context: HandlerContext, format: OgcFormat, title: string, body: { links: Link[] }, htmlLinks = body.links): unknown {
  return format === 'json'
    ? sendTextRead(context.request, context.reply, JSON.stringify(body), JSON_TYPE)
    : sendTextRead(context.request, context.reply, page(title, linkList(htmlLinks)), HTML_TYPE);
}

/** The one tile matrix set served; any other id is a 404. */
function checkTileMatrixSet(id: string): void {
  if (id !== WEB_MERCATOR_QUAD) throw hubError('ogcTileMatrixSetNotFound', { id: id.slice(0, 60) });
}

export async function ogcTileMatrixSets(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const links: Link[] = [{ href: base.href('/tileMatrixSets'), rel: 'self', type: JSON_TYPE, title: 'this document' }];
  const definition: Link = { href: base.href(tileMatrixSetPath), rel: `${REL}/tiling-scheme`, type: JSON_TYPE, title: WEB_MERCATOR_QUAD };
  const body = {
    links,
    tileMatrixSets: [{ id: WEB_MERCATOR_QUAD, title: 'Google Maps Compatible for the World', uri: WEB_MERCATOR_QUAD_URI, crs: EPSG_3857, links: [definition] }],
  };
  return send(context, format, 'Tile matrix sets', body, [...links, definition]);
}

export async function ogcTileMatrixSet(context: HandlerContext): Promise<unknown> {
  checkTileMatrixSet(context.params.tileMatrixSetId);
  const format = ogcFormat(context);
  const base = linkBase(context);
  const links: Link[] = [{ href: base.href(tileMatrixSetPath), rel: 'self', type: JSON_TYPE, title: 'this document' }];
  return send(context, format, WEB_MERCATOR_QUAD, { ...webMercatorQuad(MAX_VECTOR_TILE_LEVEL), links });
}

/** The tileset of a collection as listed (`tilesets`) and described (`tileset`): its tile link, the tile matrix set and its extent. */
function tileset(context: HandlerContext, base: LinkBase, collection: Collection): { summary: object; listed: Link[]; links: Link[]; limits?: object[] } {
  const path = `${tilesPath(collection.id)}/${WEB_MERCATOR_QUAD}`;
  // What the tileset list gives of it: where it is and its tile matrix set; its own document adds the rest.
  const listed: Link[] = [
    { href: base.href(path), rel: 'self', type: JSON_TYPE, title: `${collection.title} in ${WEB_MERCATOR_QUAD}` },
    { href: base.href(tileMatrixSetPath), rel: `${REL}/tiling-scheme`, type: JSON_TYPE, title: WEB_MERCATOR_QUAD },
  ];
  const links: Link[] = [
    ...listed,
    { href: `${base.root}${path}/{tileMatrix}/{tileRow}/{tileCol}`, rel: 'item', type: MVT, title: 'vector tiles (MVT)', templated: true },
    { href: base.href(`/collections/${encodeURIComponent(collection.id)}`), rel: `${REL}/geodata`, type: JSON_TYPE, title: collection.title },
    { href: tileJsonUrl(context, collection.id), rel: 'alternate', type: JSON_TYPE, title: 'this tileset as TileJSON 3.0.0' },
  ];
  // A sampled extent may miss features: only an exact one narrows the tiles a client asks for.
  const bounds = collection.extent && !collection.extentEstimated ? collection.extent : undefined;
  return {
    summary: { title: collection.title, dataType: 'vector', crs: EPSG_3857, tileMatrixSetURI: WEB_MERCATOR_QUAD_URI },
    listed,
    links,
    limits: bounds ? tileMatrixLimits(bounds, MAX_VECTOR_TILE_LEVEL) : undefined,
  };
}

export async function ogcTilesets(context: HandlerContext): Promise<unknown> {
  const format = ogcFormat(context);
  const base = linkBase(context);
  const collection = await context.hub.ogc.collection(callerOf(context), context.params.spaceId);
  const { summary, listed } = tileset(context, base, collection);
  const own: Link[] = [
    { href: base.href(tilesPath(collection.id)), rel: 'self', type: JSON_TYPE, title: 'this document' },
    { href: base.href(`/collections/${encodeURIComponent(collection.id)}`), rel: `${REL}/geodata`, type: JSON_TYPE, title: collection.title },
  ];
  const body = { links: own, tilesets: [{ ...summary, links: listed }] };
  return send(context, format, `Tilesets of ${collection.title}`, body, [...own, ...listed]);
}

export async function ogcTileset(context: HandlerContext): Promise<unknown> {
  checkTileMatrixSet(context.params.tileMatrixSetId);
  const format = ogcFormat(context);
  const base = linkBase(context);
  const collection = await context.hub.ogc.collection(callerOf(context), context.params.spaceId);
  const { summary, links, limits } = tileset(context, base, collection);
  const [west, south, east, north] = collection.extent ?? WEB_MERCATOR_WORLD;
  const body = {
    ...summary,
    ...(collection.description ? { description: collection.description } : {}),
    ...(limits ? { tileMatrixSetLimits: limits } : {}),
    boundingBox: { lowerLeft: [west, south], upperRight: [east, north], crs: CRS84 },
    layers: [{
      id: collection.id, title: collection.title, dataType: 'vector', minTileMatrix: '0', maxTileMatrix: String(MAX_VECTOR_TILE_LEVEL),
      propertiesSchema: { type: 'object', properties: propertiesSchema(collection) },
    }],
    links,
  };
  return send(context, format, `${collection.title} in ${WEB_MERCATOR_QUAD}`, body);
}

/** The tile attributes as JSON Schema properties; a `Mixed` one has no type. */
function propertiesSchema(collection: Collection): Record<string, { type?: string }> {
  return Object.fromEntries(Object.entries(tileFields(collection)).map(([name, type]) => [name, type === 'Mixed' ? {} : { type: type.toLowerCase() }]));
}

/** A path segment that must be a plain decimal number. */
function tileNumber(context: HandlerContext, name: 'tileMatrix' | 'tileRow' | 'tileCol'): number {
  const value = context.params[name];
  if (!/^\d{1,10}$/.test(value)) throw hubError('ogcInvalidTile', { name, value: value.slice(0, 40) });
  return Number(value);
}

/** One tile: the web tile z/x/y with x the column and y the row, read as the XYZ tile route reads it (MVT, no margin). */
export async function ogcTile(context: HandlerContext): Promise<unknown> {
  checkTileMatrixSet(context.params.tileMatrixSetId);
  const [level, row, col] = [tileNumber(context, 'tileMatrix'), tileNumber(context, 'tileRow'), tileNumber(context, 'tileCol')];
  if (level > MAX_VECTOR_TILE_LEVEL || row >= 2 ** level || col >= 2 ** level) {
    throw hubError('ogcTileNotFound', { tileMatrix: level, tileRow: row, tileCol: col, maxLevel: MAX_VECTOR_TILE_LEVEL });
  }
  const read = {
    tile: { scheme: 'web' as const, level, x: col, y: row, format: 'mvt' as const },
    margin: 0,
    filter: {},
    limit: DEFAULT_LIMIT,
    clip: true,
    options: clientGoneOnUse({ transforms: [], etagKey: etagKey(context) }, context.reply),
    at: 'HEAD' as const,
  };
  const answer = await context.hub.spatial.vectorTile(callerOf(context), context.params.spaceId, read, false);
  return sendVectorTile(context.request, context.reply, answer);
}
