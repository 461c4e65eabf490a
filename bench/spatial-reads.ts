// Benchmark section `spatial`: bbox, tile and vector-tile reads of a 1,000,000-point space over HTTP (16 connections, rotating requests), each next to the same reads on storage.
import autocannon from 'autocannon';
import type { VectorTileRequest } from '../src/core/vector-tile-request.js';
import type { BBox } from '../src/geo/bbox.js';
import { enlargedBounds, quadkeyOf, type Tile, tileBounds } from '../src/geo/tile-schemes.js';
import { fillDirectly, SPATIAL_REGION, spatialPointParts } from './data.js';
import { type BenchEngine, openStorage, spaceKey } from './engines.js';
import type { FloorReads, SpatialFloorRead } from './floor-reads.js';
import type { BenchHub } from './hub-server.js';
import type { HubClient } from './http.js';
import type { Rate } from './measure.js';

const CONNECTIONS = 16;
/** Reads rotated through in each figure: enough that no two connections ask the same thing at once. */
const ROTATION = 200;
const DEFAULT_LIMIT = 30_000;

export interface SpatialBench {
  hub: BenchHub;
  client: HubClient;
  reads: FloorReads;
  engine: BenchEngine;
  points: number;
  fillBatch: number;
  seconds: number;
  goals: { smallBox: number; largeBox: number; vectorTile: number };
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

interface Figure {
  figure: string;
  /** Hub paths, rotated through. */
  paths: string[];
  /** The same reads on storage. */
  floor: SpatialFloorRead[];
  measure: 'reads' | 'bytes';
  unit: string;
  goal?: number;
}

/** Evenly spread positions in the region (R2 sequence, shifted off the fill's own points). */
function spread(count: number): Array<[number, number]> {
  const [west, south, east, north] = SPATIAL_REGION;
  return Array.from({ length: count }, (_, i) => [
    west + ((0.31 + i * 0.7548776662466927) % 1) * (east - west),
    south + ((0.17 + i * 0.5698402909980532) % 1) * (north - south),
  ]);
}

/** Square boxes of `side` degrees (longitude; latitude the same) inside the region. */
function boxes(side: number): BBox[] {
  const [west, south, east, north] = SPATIAL_REGION;
  return spread(ROTATION).map(([lon, lat]): BBox => {
    const x = Math.min(lon, east - side);
    const y = Math.min(lat, north - side);
    return [Math.max(west, x), Math.max(south, y), Math.max(west, x) + side, Math.max(south, y) + side];
  });
}

/** The web tiles of a level that hold the spread positions. */
function tiles(level: number): Tile[] {
  const size = 2 ** level;
  return spread(ROTATION).map(([lon, lat]) => {
    const radians = (lat * Math.PI) / 180;
    return {
      scheme: 'web', level, format: 'geojson',
      x: Math.floor(((lon + 180) / 360) * size),
      y: Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * size),
    };
  });
}

function vectorRequest(layer: string, tile: Tile): VectorTileRequest {
  return { layer, bounds: tileBounds(tile), projection: 'mercator', extent: 4096, buffer: 0, flatten: false };
}

/** The side of a square box holding about `count` of the evenly spread points. */
function sideFor(count: number, points: number): number {
  const [west, south, east, north] = SPATIAL_REGION;
  return Math.sqrt((count / points) * (east - west) * (north - south));
}

async function fill(bench: SpatialBench, space: string): Promise<void> {
  const side = await openStorage(bench.engine.hubSpec(bench.hub.dataDir));
  try {
    const key = await spaceKey(side, space);
    const filled = await fillDirectly(side, key, bench.points, bench.fillBatch, (i, timestamp) => spatialPointParts(i, space, timestamp));
    bench.note(`Spatial: filled ${bench.points} points over ${SPATIAL_REGION.join(',')} directly in ${filled.seconds.toFixed(1)} s.`);
  } finally {
    await side.close();
  }
  await bench.engine.afterBulkLoad?.();
}

async function overHttp(bench: SpatialBench, figure: Figure): Promise<{ rate: Rate; p99: number }> {
  let next = 0;
  const result = await autocannon({
    url: bench.hub.origin,
    connections: CONNECTIONS,
    duration: bench.seconds,
    headers: { authorization: `Bearer ${bench.hub.token}` },
    requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: figure.paths[next++ % figure.paths.length] }) }],
  });
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${figure.figure}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
  const items = figure.measure === 'bytes' ? result.throughput.total : result.requests.total;
  return { rate: { items, seconds: result.duration }, p99: result.latency.p99 };
}

export async function spatialReads(bench: SpatialBench): Promise<void> {
  const created = await bench.client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench spatial' }), { 'content-type': 'application/json' });
  const space = (JSON.parse(created.toString()) as { id: string }).id;
  bench.log(`spatial: filling ${bench.points} points`);
  await fill(bench, space);
  const base = `/hub/spaces/${space}`;
  const small = boxes(sideFor(100, bench.points));
  const large = boxes(sideFor(10_000, bench.points));
  const z14 = tiles(14);
  const z13 = tiles(13).map((tile): Tile => ({ ...tile, scheme: 'quadkey' }));
  const boxPath = ([west, south, east, north]: BBox) => `${base}/bbox?west=${west}&south=${south}&east=${east}&north=${north}`;
  const figures: Figure[] = [
    {
      figure: 'Small bbox (about 100 features)', unit: 'requests/s', measure: 'reads', goal: bench.goals.smallBox,
      paths: small.map(boxPath), floor: small.map((box) => ({ box, limit: DEFAULT_LIMIT })),
    },
    {
      figure: 'Large bbox (about 10,000 features)', unit: 'bytes/s', measure: 'bytes', goal: bench.goals.largeBox,
      paths: large.map(boxPath), floor: large.map((box) => ({ box, limit: DEFAULT_LIMIT })),
    },
    {
      figure: 'Web tiles z14 as GeoJSON', unit: 'tiles/s', measure: 'reads',
      paths: z14.map((tile) => `${base}/tile/web/14_${tile.x}_${tile.y}`), floor: z14.map((tile) => ({ box: tileBounds(tile), limit: DEFAULT_LIMIT })),
    },
    {
      figure: 'Web tiles z14 as MVT', unit: 'tiles/s', measure: 'reads', goal: bench.goals.vectorTile,
      paths: z14.map((tile) => `${base}/tile/web/14_${tile.x}_${tile.y}.mvt`),
      floor: z14.map((tile) => ({ box: tileBounds(tile), limit: DEFAULT_LIMIT, tile: vectorRequest(space, tile) })),
    },
    {
      figure: 'Quadkey tiles z13, margin=20&clip=false', unit: 'tiles/s', measure: 'reads',
      paths: z13.map((tile) => `${base}/tile/quadkey/${quadkeyOf(13, tile.x, tile.y)}?margin=20&clip=false`),
      floor: z13.map((tile) => ({ box: enlargedBounds(tile, 20), limit: DEFAULT_LIMIT })),
    },
  ];
  const spec = bench.engine.hubSpec(bench.hub.dataDir);
  for (const figure of figures) {
    bench.log(`spatial: ${figure.figure}`);
    // A first pass warms both sides' caches; then each side's better turn counts.
    await overHttp(bench, { ...figure });
    const turns = [await overHttp(bench, figure), await overHttp(bench, figure)];
    const best = turns.reduce((a, b) => (a.rate.items / a.rate.seconds >= b.rate.items / b.rate.seconds ? a : b));
    const floorTurns = [];
    for (let turn = 0; turn < 2; turn++) {
      floorTurns.push(await bench.reads.run('spatial', { spec, spaceId: space, reads: figure.floor, seconds: bench.seconds, concurrency: CONNECTIONS, measure: figure.measure }));
    }
    const floor = floorTurns.reduce((a, b) => (a.items / a.seconds >= b.items / b.seconds ? a : b));
    bench.addRow({ figure: figure.figure, unit: figure.unit, http: best.rate, floor, goal: figure.goal, note: `p99 ${best.p99} ms; ${CONNECTIONS} connections` });
  }
}
