// Spatial reads of a space (API.md 6): bbox, tiles and spatial search, each one FeatureQuery with a spatial filter plus a clip step.
import { cellToBoundary, isValidCell } from 'h3-js';
import { hubError } from '../../core/errors.js';
import type { FeatureFilter, FeatureQuery, FeatureRow } from '../../core/feature-query.js';
import type { SpatialFilter } from '../../geo/spatial-filter.js';
import type { VectorTileRequest } from '../../geo/vector-tile-request.js';
import { type BBox, geometryBBox } from '../../geo/bbox.js';
import { bufferCrossesAntimeridian } from '../../geo/antimeridian.js';
import { clipToBox, clipToGeometry } from '../../geo/clip.js';
import { distanceBounds } from '../../geo/geodesic-distance.js';
import { geodesicBuffer } from '../../geo/geodesic-buffer.js';
import type { Geometry, Polygon } from '../../geo/geometry.js';
import { enlargedBounds, type Tile, tileBounds } from '../../geo/tile-schemes.js';
import { MAX_VECTOR_TILE_LEVEL } from '../../geo/vector-tile.js';
import { AccessRecord, decide } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';
import type { FeatureSource } from '../feature-source.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import { cluster, type ClusterArea } from '../clustering/cluster.js';
import { sampled, samplingRatio, simplifyStep, stripProperties, type Tweaks, type VizRead } from './display-tweaks.js';
import { checkClusterableTile, type ClusteringRequest } from '../clustering/clustering-options.js';
import { AnswerCache } from './answer-cache.js';
import { cacheTTLOf, type FeatureService, type VectorTileAnswer } from './feature-service.js';
import { answerName, type FeatureCollectionStream, hashedName, type ReadOptions } from './read-pipeline.js';
import type { TransformPlan, TransformStep } from './transform-plan.js';
import type { VersionRef } from '../versions/space-versions.js';

/** What every spatial read has besides its area. */
export interface AreaRead {
  filter: FeatureFilter;
  limit: number;
  /** Cut geometries to the area (API.md 6.1, 6.2, 6.5). */
  clip: boolean;
  options: ReadOptions;
  /** Answer with cells instead of features (API.md 6.4); bbox and web/quadkey/tms tiles only. */
  clustering?: ClusteringRequest;
  /** Sampling or simplification for display (API.md 6.3); bbox and tiles only. */
  tweaks?: Tweaks;
  /** The version read (ADR 002); a feature referenced for a spatial search is read at HEAD of its own space. */
  at: VersionRef;
}

/** `corners` as sent: any two opposite corners, so swapped values select the same box (API.md 6.1). */
export interface BoxRead extends AreaRead {
  corners: BBox;
}

export interface TileRead extends AreaRead {
  tile: Tile;
  /** Pixels at 256 px per tile; ignored for `here` tiles. */
  margin: number;
  /** `mode=viz`. */
  viz?: VizRead;
}

/** MVT tiles have 4096 units a side and 16 units of buffer per pixel of margin (API.md 6.2). */
const MVT_EXTENT = 4096;
const MVT_UNITS_PER_PIXEL = 16;
/**
 * Units every vector tile keeps beyond its edges (Martin's default; docs/vector-tiles.md), so that a polygon cut by
 * the tile does not get an outline along the tile's edge: its cut lies outside what a client draws of the tile.
 */
const MVT_DEFAULT_BUFFER = 64;

/** Where the reference geometry of a spatial search comes from (API.md 6.5, 6.6). */
export type SpatialSource =
  | { kind: 'point'; lon: number; lat: number }
  | { kind: 'feature'; spaceId: string; featureId: string }
  | { kind: 'h3'; index: string }
  | { kind: 'geometry'; geometry: Geometry };

export interface SpatialRead extends AreaRead {
  source: SpatialSource;
  /** Metres on the spheroid; negative shrinks polygons. */
  radius: number;
}

/** The feature with its geometry cut by `cut`; a feature left with nothing of its own dimension is left out. */
function clipStep(cut: (geometry: Geometry) => Geometry | undefined): TransformStep {
  return {
    name: 'clip',
    apply: (feature) => {
      if (!feature.geometry) return feature;
      const geometry = cut(feature.geometry as Geometry);
      return geometry === undefined ? undefined : { ...feature, geometry };
    },
  };
}

/** Clipping and the display steps come first: force2D and selection, which may drop the geometry, come after. */
function withSteps(options: ReadOptions, steps: ReadonlyArray<TransformStep | undefined>): ReadOptions {
  const added = steps.filter((step): step is TransformStep => step !== undefined);
  if (added.length === 0) return options;
  const plan: TransformPlan = [...added, ...options.transforms];
  return { ...options, transforms: plan };
}

/** The features of an answer sent from the cache: none are read. */
async function* noFeatures(): AsyncIterable<string> {}

/** The format part of the answer cache's keys of GeoJSON answers (vector tiles: `mvt`, `mvtf`). */
const GEOJSON = 'geojson';

const orderedBox = ([a, b, c, d]: BBox): BBox => [Math.min(a, c), Math.min(b, d), Math.max(a, c), Math.max(b, d)];

export class SpatialService {
  /** `cache` holds whole answers of these reads (answer-cache.ts); one of size 0 holds none. */
  constructor(private readonly spaces: SpaceResolver, private readonly features: FeatureService, private readonly cache = new AnswerCache(0)) {}

  /**
   * The answer of the read of `source` at `version` from the cache, or `make`'s, offered to the cache once made whole.
   * The source is granted already: a cached answer only goes to a caller who may read every space it shows.
   */
  private async throughCache(source: FeatureSource, version: number | undefined, etagKey: string,
    make: () => Promise<FeatureCollectionStream>): Promise<FeatureCollectionStream> {
    if (!this.cache.enabled) return make();
    // Keyed by the name itself, so a hit hashes nothing: a cached answer carries its ETag, and its key is hashed only if asked for.
    const name = answerName(source, etagKey, version);
    const key = `${GEOJSON}\n${name}`;
    const cached = this.cache.get(key);
    if (cached) {
      return {
        get key() { return hashedName(name); }, cacheTTL: cacheTTLOf(source.space.definition), features: noFeatures(), trailer: () => ({}), cached,
        keepEncoded: (encoded) => this.cache.setEncoded(key, cached, encoded),
      };
    }
    const result = await make();
    return { ...result, keep: (answer) => this.cache.set(key, answer, `${GEOJSON}\n${etagKey}`) };
  }

  async bbox(caller: Claims, spaceId: string, read: BoxRead): Promise<FeatureCollectionStream> {
    const box = orderedBox(read.corners);
    if (read.clustering) return this.clustered(caller, spaceId, read, read.clustering, { bbox: box, clip: read.clip });
    return this.area(caller, spaceId, read, { kind: 'box', box }, read.clip ? clipStep((geometry) => clipToBox(geometry, box)) : undefined, box);
  }

  async tile(caller: Claims, spaceId: string, read: TileRead): Promise<FeatureCollectionStream> {
    const box = enlargedBounds(read.tile, read.tile.scheme === 'here' ? 0 : read.margin);
    if (read.clustering) {
      checkClusterableTile(read.tile);
      return this.clustered(caller, spaceId, read, read.clustering, { bbox: box, tile: read.tile, clip: read.clip });
    }
    return this.area(caller, spaceId, read, { kind: 'box', box }, read.clip ? clipStep((geometry) => clipToBox(geometry, box)) : undefined, box, read.viz);
  }

  async spatial(caller: Claims, spaceId: string, read: SpatialRead): Promise<FeatureCollectionStream> {
    const reference = await this.referenceGeometry(caller, read.source);
    const { filter, searched } = this.searchArea(reference, read.radius);
    if (read.clip && read.radius > 0 && bufferCrossesAntimeridian(reference, read.radius)) {
      throw hubError('clipAcrossAntimeridian', { radius: read.radius });
    }
    const clipTo = read.clip ? searched() : undefined;
    // The reference comes from a body or another space, not from the request line: it names the answer too.
    const named = { ...read, options: { ...read.options, etagKey: `${read.options.etagKey}\n${JSON.stringify(reference)}` } };
    return this.area(caller, spaceId, named, filter, clipTo ? clipStep((geometry) => clipToGeometry(geometry, clipTo)) : undefined);
  }

  /**
   * The tile as MVT (flattened attributes for `.mvtf`): storage encodes the features of the enlarged tile,
   * clipped to the tile and its buffer; clustered cells are encoded here.
   */
  async vectorTile(caller: Claims, spaceId: string, read: TileRead, flatten: boolean): Promise<VectorTileAnswer> {
    const { tile } = read;
    if (tile.level > MAX_VECTOR_TILE_LEVEL) throw hubError('vectorTileLevel', { level: tile.level, limit: MAX_VECTOR_TILE_LEVEL });
    const margin = tile.scheme === 'here' ? 0 : read.margin;
    const box = enlargedBounds(tile, margin);
    const request: VectorTileRequest = {
      layer: spaceId,
      bounds: tileBounds(tile),
      projection: tile.scheme === 'here' ? 'geographic' : 'mercator',
      extent: MVT_EXTENT,
      buffer: MVT_DEFAULT_BUFFER + MVT_UNITS_PER_PIXEL * margin,
      flatten,
    };
    if (read.clustering) checkClusterableTile(tile);
    const clustering = read.clustering && this.clustering(caller, read, read.clustering, { bbox: box, tile, clip: read.clip });
    const source = await this.features.reader(caller, spaceId);
    const version = await this.features.versionOf(source, read.at);
    // The URL of a tile asked for as MVT by its Accept header is that of its GeoJSON answer: the format is in the key.
    const format = flatten ? 'mvtf' : 'mvt';
    const key = `${format}\n${answerName(source, read.options.etagKey, version)}`;
    const cached = this.cache.get(key);
    if (cached) return { etag: cached.etag, cacheTTL: cacheTTLOf(source.space.definition), tile: cached.body };
    let answer: VectorTileAnswer;
    if (clustering) answer = await this.features.vectorTile(source, { ...clustering.query, version }, request, read.options, clustering.summarize);
    else {
      const query = { ...read.filter, spatial: { kind: 'box', box } satisfies SpatialFilter, limit: read.limit, version };
      const ratio = await this.samplingRatio(source, query, read, read.viz);
      answer = await this.features.vectorTile(source, sampled(query, ratio), request, read.options);
    }
    this.cache.set(key, { body: answer.tile, etag: answer.etag }, `${format}\n${read.options.etagKey}`);
    return answer;
  }

  private async clustered(caller: Claims, spaceId: string, read: AreaRead, request: ClusteringRequest, area: ClusterArea): Promise<FeatureCollectionStream> {
    const { query, summarize } = this.clustering(caller, read, request, area);
    const source = await this.features.reader(caller, spaceId);
    const version = await this.features.versionOf(source, read.at);
    return this.throughCache(source, version, read.options.etagKey, async () => this.features.summary(source, { ...query, version }, read.options, summarize));
  }

  /**
   * Every feature of the area is aggregated, whatever the limit: `limit` caps the cells returned. Quadbin
   * counts take at most one property filter (API.md 6.4). Clustering is a capability the token must hold (API.md 8.3).
   */
  private clustering(caller: Claims, read: AreaRead, request: ClusteringRequest, area: ClusterArea) {
    decide(caller, new AccessRecord().capability(`${request.kind}Clustering`));
    if (request.kind === 'quadbin' && (read.filter.properties ?? []).length > 1) {
      throw hubError('invalidClustering', { name: 'quadbin', problem: 'Quadbin clustering takes at most one property filter.' });
    }
    const query: FeatureQuery = { ...read.filter, spatial: { kind: 'box', box: area.bbox }, limit: Number.MAX_SAFE_INTEGER };
    const summarize = async (rows: AsyncIterable<FeatureRow[]>) => (await cluster(request, area, rows)).slice(0, read.limit);
    return { query, summarize };
  }

  /**
   * A read of the features of an area. `box` is the area a rendering shows (bbox and tiles: simplification
   * scales with it); a sampled answer says `"partial": true` (API.md 6.3).
   */
  private async area(caller: Claims, spaceId: string, read: AreaRead, spatial: SpatialFilter, clip: TransformStep | undefined,
    box?: BBox, viz?: VizRead): Promise<FeatureCollectionStream> {
    const steps = [
      clip,
      box && read.tweaks?.kind === 'simplification' ? simplifyStep(box, read.tweaks.strength) : undefined,
      viz && !viz.keepProperties ? stripProperties : undefined,
    ];
    const options = withSteps(read.options, steps);
    const atHead: FeatureQuery = { ...read.filter, spatial, limit: read.limit };
    // Unsampled at HEAD, its texts sent as stored: the storage may read the space and the first texts in one statement,
    // unless the cache will likely answer it (a map's tiles asked again), when the space is looked up alone (batched).
    const asStored = read.at === 'HEAD' && !viz && !read.tweaks && options.transforms.length === 0 && !options.plainTexts
      && !this.cache.answeredLately(`${GEOJSON}\n${read.options.etagKey}`);
    const source = asStored ? await this.features.areaReader(caller, spaceId, atHead) : await this.features.reader(caller, spaceId);
    const version = await this.features.versionOf(source, read.at);
    return this.throughCache(source, version, read.options.etagKey, async () => {
      const query: FeatureQuery = version === undefined ? atHead : { ...atHead, version };
      const ratio = await this.samplingRatio(source, query, read, viz);
      const result = this.features.collection(source, sampled(query, ratio), options);
      return ratio > 1 ? { ...result, trailer: () => ({ ...result.trailer(), partial: true }) } : result;
    });
  }

  private samplingRatio(source: FeatureSource, query: FeatureQuery, read: AreaRead, viz: VizRead | undefined): Promise<number> {
    return samplingRatio(viz, read.tweaks, (limit) => source.countUpTo({ ...query, limit }, read.options.signal));
  }

  /**
   * A positive radius is a distance on the spheroid (`ST_DWithin` on geography); zero is plain intersects;
   * a negative one shrinks the geometry and intersects with what is left. `searched` builds the searched
   * area for clipping (a positive radius's geodesic buffer is only built when asked for); undefined when
   * nothing is left, which also matches nothing.
   */
  private searchArea(reference: Geometry, radius: number): { filter: SpatialFilter; searched: () => Geometry | undefined } {
    if (radius > 0 && reference.type !== 'Point' && bufferCrossesAntimeridian(reference, radius)) {
      throw hubError('bufferCrossesAntimeridian', { radius });
    }
    if (radius > 0) {
      const filter: SpatialFilter = { kind: 'distance', geometry: reference, radius, bounds: distanceBounds(reference, radius) };
      return { filter, searched: () => geodesicBuffer(reference, radius) };
    }
    const area = radius < 0 ? geodesicBuffer(reference, radius) : reference;
    if (!area) return { filter: { kind: 'box', box: NOWHERE }, searched: () => undefined };
    return { filter: { kind: 'geometry', geometry: area, bounds: geometryBBox(area) ?? NOWHERE }, searched: () => area };
  }

  /** A referenced feature is read too: the caller needs readFeatures on its space and every layer it shows (API.md 8.3). */
  private async referenceGeometry(caller: Claims, source: SpatialSource): Promise<Geometry> {
    switch (source.kind) {
      case 'point':
        return { type: 'Point', coordinates: [source.lon, source.lat] };
      case 'geometry':
        return source.geometry;
      case 'h3':
        return h3Polygon(source.index);
      case 'feature': {
        const found = await this.spaces.openWithFeature(caller, source.spaceId, source.featureId, () => { throw hubError('refSpaceNotFound', { id: source.spaceId }); });
        const feature = await found.read();
        if (feature === undefined) throw hubError('refFeatureNotFound', { id: source.featureId });
        const { geometry } = JSON.parse(feature) as { geometry?: Geometry | null };
        if (!geometry) throw hubError('refFeatureWithoutGeometry', { id: source.featureId });
        return geometry;
      }
    }
  }
}

/**
 * A box no feature reaches: latitudes never exceed 90, so it matches nothing while keeping the
 * filter a plain box that both engines already handle.
 */
const NOWHERE: BBox = [0, 91, 0, 91];

/** The boundary of an H3 cell as a closed GeoJSON ring. */
function h3Polygon(index: string): Polygon {
  if (!isValidCell(index)) throw hubError('invalidParameter', { name: 'h3Index', problem: `"${index.slice(0, 40)}" is not a valid H3 cell index` });
  return { type: 'Polygon', coordinates: [cellToBoundary(index, true)] as Polygon['coordinates'] };
}
