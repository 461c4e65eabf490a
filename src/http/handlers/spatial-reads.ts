// Handlers of the spatial read routes (API.md 6): bbox, tile, and spatial search by GET and POST.
import { LRUCache } from 'lru-cache';
import { deepFrozen } from '../../core/deep-frozen.js';
import { hubError } from '../../core/errors.js';
import { DECIMAL } from '../../core/typed-values.js';
import { ownMember } from '../../core/json.js';
import type { BBox } from '../../geo/bbox.js';
import { parseTileId } from '../../core/tile-ids.js';
import { type ClusteringRequest, parseClustering } from '../../hub/clustering/clustering-options.js';
import type { Tweaks, VizRead } from '../../hub/features/display-tweaks.js';
import type { AreaRead, SpatialSource, TileRead } from '../../hub/features/spatial-service.js';
import { bodyStream } from '../body/body-stream.js';
import { readGeometry } from '../body/geometry-body.js';
import { DEFAULT_LIMIT, formDecode } from '../query/raw-query.js';
import { clientGoneOnUse, sendFeatureCollection, sendVectorTile } from '../reply/read-reply.js';
import { callerOf, type HandlerContext } from '../request-context.js';
import { featureFilter, readOptions } from './read-parameters.js';
import { versionRefOf } from '../query/version-ref.js';

type Axis = 'longitude' | 'latitude';

const AXIS_LIMIT: Record<Axis, number> = { longitude: 180, latitude: 90 };

/** A coordinate parameter given exactly once, in decimal degrees within the axis's range (API.md 6.1, 6.5). */
export function coordinate(context: HandlerContext, name: string, axis: Axis): number {
  const values = context.query.occurrences(name);
  if (values.length !== 1) throw hubError('notExactlyOneValue', { name });
  const value = values[0].trim();
  const limit = AXIS_LIMIT[axis];
  const parsed = DECIMAL.test(value) ? Number(value) : NaN;
  if (!(Math.abs(parsed) <= limit)) throw hubError('invalidCoordinate', { name, axis, max: limit });
  return parsed;
}

/** Radius in metres: an integer; the largest takes half the Earth's circumference, where every point is reached. */
const MAX_RADIUS = 20_100_000;

/** What every spatial read takes: filters, limit, clip (with its default) and the output transforms, without the client-gone signal. */
function parsedArea(context: HandlerContext, clipByDefault: boolean, defaultLimit = DEFAULT_LIMIT): AreaRead {
  return {
    filter: featureFilter(context),
    limit: context.query.limit(defaultLimit),
    clip: context.query.boolean('clip', clipByDefault),
    options: readOptions(context),
    at: versionRefOf(context.query),
  };
}

/** As parsedArea, with the signal. */
function areaRead(context: HandlerContext, clipByDefault: boolean, defaultLimit = DEFAULT_LIMIT): AreaRead {
  const area = parsedArea(context, clipByDefault, defaultLimit);
  return { ...area, options: clientGoneOnUse(area.options, context.reply) };
}

/** Only the exact words count for a boolean tweak: anything else is refused rather than read as the default. */
function strictBoolean(context: HandlerContext, name: string): boolean {
  const value = context.query.first(name);
  if (value === undefined || value === '') return false;
  if (value !== 'true' && value !== 'false') throw hubError('invalidParameter', { name, problem: `expected true or false, got "${value.slice(0, 40)}"` });
  return value === 'true';
}

const STRENGTHS: Record<string, number> = { low: 10, lowmed: 30, med: 50, medhigh: 70, high: 90 };

/**
 * `tweaks`, `tweaks.strength`, `tweaks.algorithm`, `tweaks.samplingthreshold` (API.md 6.3); undefined without
 * `tweaks`. Every `tweaks.*` value is validated even then, `tweaks.defaultselection` too (viz reads it).
 */
function tweaksOf(context: HandlerContext): Tweaks | undefined {
  strictBoolean(context, 'tweaks.defaultselection');
  const strengthText = context.query.first('tweaks.strength') ?? 'med';
  const strength = ownMember(STRENGTHS, strengthText.toLowerCase()) ?? (/^\d{1,3}$/.test(strengthText) ? Number(strengthText) : NaN);
  if (!(strength >= 1 && strength <= 100)) {
    throw hubError('invalidParameter', { name: 'tweaks.strength', problem: `expected low, lowmed, med, medhigh, high or an integer from 1 to 100, got "${strengthText.slice(0, 40)}"` });
  }
  const algorithm = context.query.first('tweaks.algorithm');
  if (algorithm !== undefined && !/^[A-Za-z0-9_-]{1,40}$/.test(algorithm)) {
    throw hubError('invalidParameter', { name: 'tweaks.algorithm', problem: 'expected a name of letters, digits, "_" or "-"' });
  }
  const samplingThreshold = context.query.integer('tweaks.samplingthreshold', 10, 10, 100) * 1000;
  if (context.query.first('tweaks') === undefined) return undefined;
  const kind = context.query.choice('tweaks', ['sampling', 'simplification', 'ensure'] as const, 'sampling');
  return { kind, strength, samplingThreshold };
}

/** `mode=viz` and its `vizSampling` (API.md 6.3); undefined for `mode=raw`. */
function vizOf(context: HandlerContext): VizRead | undefined {
  const mode = context.query.choice('mode', ['raw', 'viz'] as const, 'raw');
  const sampling = context.query.choice('vizSampling', ['low', 'med', 'high', 'off'] as const, 'med');
  if (mode === 'raw') return undefined;
  const selected = context.query.values('selection').some((name) => name.trim() !== '');
  return { sampling, keepProperties: selected || strictBoolean(context, 'tweaks.defaultselection') };
}

const CLUSTERING_OPTION = 'clustering.';

/** `clustering` and its `clustering.<name>=<value>` options (API.md 6.4); undefined when not asked for. */
function clusteringOf(context: HandlerContext): ClusteringRequest | undefined {
  const options = new Map<string, string>();
  for (const segment of context.query.rawSegmentsStartingWith(CLUSTERING_OPTION, true)) {
    const equals = segment.indexOf('=');
    const name = formDecode(segment.slice(CLUSTERING_OPTION.length, equals < 0 ? undefined : equals));
    const value = equals < 0 ? '' : formDecode(segment.slice(equals + 1));
    if (name === undefined || value === undefined) throw hubError('invalidClustering', { name: 'clustering', problem: 'Malformed percent-encoding.' });
    options.set(name, value);
  }
  return parseClustering(context.query.first('clustering'), options);
}

export async function bboxFeatures(context: HandlerContext): Promise<unknown> {
  const corners: BBox = [
    coordinate(context, 'west', 'longitude'), coordinate(context, 'south', 'latitude'),
    coordinate(context, 'east', 'longitude'), coordinate(context, 'north', 'latitude'),
  ];
  const read = { ...areaRead(context, false), corners, clustering: clusteringOf(context), tweaks: tweaksOf(context) };
  const result = await context.hub.spatial.bbox(callerOf(context), context.params.spaceId, read);
  return sendFeatureCollection(context.request, context.reply, result);
}

const MVT = 'application/vnd.mapbox-vector-tile';

/** `.mvt`/`.mvtf` ids, or the MVT media type in `Accept`, ask for a vector tile (API.md 6.2). */
function vectorFormat(context: HandlerContext, format: 'geojson' | 'mvt' | 'mvtf'): { flatten: boolean } | undefined {
  if (format !== 'geojson') return { flatten: format === 'mvtf' };
  const accept = context.request.headers.accept ?? '';
  return accept.toLowerCase().includes(MVT) ? { flatten: false } : undefined;
}

/** Viz mode defaults to 100,000 features and to clipping; MVT always clips (API.md 6.2, 6.3). */
const VIZ_LIMIT = 100_000;

/** A tile request as parsed: everything but the per-request signal. */
interface ParsedTile {
  read: TileRead;
  vector: { flatten: boolean } | undefined;
}

function parseTile(context: HandlerContext): ParsedTile {
  const { type, tileId } = context.params;
  const tile = parseTileId(type, tileId, context.hereTileEncoding);
  const margin = context.query.integer('margin', 0, 0, 1024);
  const vector = vectorFormat(context, tile.format);
  const viz = vizOf(context);
  const area = parsedArea(context, vector !== undefined || viz !== undefined, viz ? VIZ_LIMIT : DEFAULT_LIMIT);
  return { read: { ...area, tile, margin, viz, clustering: clusteringOf(context), tweaks: tweaksOf(context) }, vector };
}

/**
 * Tile requests parsed, by their URL and whether `Accept` asks for MVT (all a parse reads besides the hub's settings):
 * a map asks for the same tiles again and again, and their parse was a sixth of a cached tile's cost. Only requests that
 * parsed are kept (a bad one is refused anew each time), frozen, since requests share them.
 */
const parsedTiles = new LRUCache<string, ParsedTile>({ max: 2000 });
/** Longer URLs are parsed each time rather than kept. */
const LONGEST_KEPT_URL = 2048;

function tileOf(context: HandlerContext): ParsedTile {
  const { url } = context.request;
  if (url.length > LONGEST_KEPT_URL) return parseTile(context);
  const key = `${(context.request.headers.accept ?? '').toLowerCase().includes(MVT) ? 'mvt' : ''} ${url}`;
  let parsed = parsedTiles.get(key);
  if (!parsed) {
    parsed = deepFrozen(parseTile(context));
    parsedTiles.set(key, parsed);
  }
  return parsed;
}

export async function tileFeatures(context: HandlerContext): Promise<unknown> {
  const parsed = tileOf(context);
  const { vector } = parsed;
  const read = { ...parsed.read, options: clientGoneOnUse(parsed.read.options, context.reply) };
  if (vector) {
    const answer = await context.hub.spatial.vectorTile(callerOf(context), context.params.spaceId, read, vector.flatten);
    return sendVectorTile(context.request, context.reply, answer);
  }
  const result = await context.hub.spatial.tile(callerOf(context), context.params.spaceId, read);
  return sendFeatureCollection(context.request, context.reply, result);
}

/** Exactly one source: lat+lon, refSpaceId+refFeatureId, or h3Index (API.md 6.5). */
function spatialSource(context: HandlerContext): SpatialSource {
  const given = (name: string) => context.query.first(name) !== undefined;
  const point = given('lat') || given('lon');
  const feature = given('refSpaceId') || given('refFeatureId');
  const cell = given('h3Index');
  if ([point, feature, cell].filter(Boolean).length !== 1) throw hubError('spatialSourceInvalid');
  if (point) {
    for (const name of ['lat', 'lon']) if (!given(name)) throw hubError('spatialCoordinateMissing', { name });
    return { kind: 'point', lat: coordinate(context, 'lat', 'latitude'), lon: coordinate(context, 'lon', 'longitude') };
  }
  if (feature) {
    const spaceId = context.query.first('refSpaceId');
    const featureId = context.query.first('refFeatureId');
    if (!spaceId || !featureId) throw hubError('spatialSourceInvalid');
    return { kind: 'feature', spaceId, featureId };
  }
  return { kind: 'h3', index: context.query.first('h3Index') ?? '' };
}

export async function spatialFeatures(context: HandlerContext): Promise<unknown> {
  const source = spatialSource(context);
  const radius = context.query.integer('radius', 0, -MAX_RADIUS, MAX_RADIUS);
  const result = await context.hub.spatial.spatial(callerOf(context), context.params.spaceId, { ...areaRead(context, false), source, radius });
  return sendFeatureCollection(context.request, context.reply, result);
}

export async function spatialFeaturesByGeometry(context: HandlerContext): Promise<unknown> {
  const radius = context.query.integer('radius', 0, -MAX_RADIUS, MAX_RADIUS);
  const read = areaRead(context, false);
  const geometry = await readGeometry(bodyStream(context.request.raw, context.maxBody));
  const result = await context.hub.spatial.spatial(callerOf(context), context.params.spaceId, { ...read, source: { kind: 'geometry', geometry }, radius });
  return sendFeatureCollection(context.request, context.reply, result);
}
