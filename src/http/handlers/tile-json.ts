// The TileJSON 3.0.0 document of a space's vector tiles, so that MapLibre, QGIS and others add a space by one URL.
import { MAX_VECTOR_TILE_LEVEL } from '../../geo/vector-tile.js';
import { WEB_MERCATOR_WORLD } from '../../geo/web-mercator-quad.js';
import { tileFields } from '../../hub/ogc/tile-fields.js';
import { sendTextRead } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { linkBase } from './ogc-request.js';

const spacePath = (spaceId: string) => `/hub/spaces/${encodeURIComponent(spaceId)}`;

/**
 * The token to put into the tile URLs: the request's `access_token` when that is how the caller authenticated, so
 * that a client given only the TileJSON URL can fetch its tiles. A token sent in the Authorization header never goes
 * into a URL: such a client sends the header with its tile requests too (MapLibre's transformRequest).
 */
function queryToken(context: HandlerContext): string | undefined {
  return context.request.headers.authorization === undefined ? context.query.first('access_token') : undefined;
}

/** The TileJSON URL of a space, on the request's own origin; without a token (OGC links never carry one). */
export function tileJsonUrl(context: HandlerContext, spaceId: string): string {
  return `${linkBase(context).origin}${spacePath(spaceId)}/tilejson.json`;
}

/**
 * `tiles` is the XYZ web tile route as MVT. `bounds` is the space's extent when the statistics computed it exactly,
 * else the whole Web-Mercator world (a sampled extent may miss features, and clients ask for no tile outside
 * `bounds`). `vector_layers` is the one layer, named after the space, with the attributes its tiles carry.
 */
export async function tileJson(context: HandlerContext): Promise<unknown> {
  const { spaceId } = context.params;
  const collection = await context.hub.ogc.collection(callerOf(context), spaceId);
  const token = queryToken(context);
  const tiles = `${linkBase(context).origin}${spacePath(spaceId)}/tile/web/{z}_{x}_{y}.mvt${token === undefined ? '' : `?access_token=${encodeURIComponent(token)}`}`;
  const bounds = collection.extent && !collection.extentEstimated ? collection.extent : WEB_MERCATOR_WORLD;
  const [west, south, east, north] = bounds;
  const body = {
    tilejson: '3.0.0',
    name: collection.title,
    ...(collection.description ? { description: collection.description } : {}),
    tiles: [tiles],
    scheme: 'xyz',
    minzoom: 0,
    maxzoom: MAX_VECTOR_TILE_LEVEL,
    bounds: [Math.max(west, -180), Math.max(south, WEB_MERCATOR_WORLD[1]), Math.min(east, 180), Math.min(north, WEB_MERCATOR_WORLD[3])],
    vector_layers: [{ id: spaceId, ...(collection.description ? { description: collection.description } : {}), minzoom: 0, maxzoom: MAX_VECTOR_TILE_LEVEL, fields: tileFields(collection) }],
  };
  return sendTextRead(context.request, context.reply, JSON.stringify(body), 'application/json');
}
