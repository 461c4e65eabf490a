// Benchmark section `spatial`: bbox, tile and vector-tile reads of a 1,000,000-point space over HTTP (16 connections, rotating requests), each next to a plain floor and the same reads on storage.
import autocannon from 'autocannon';
import type { VectorTileRequest } from '../src/geo/vector-tile-request.js';
import type { BBox } from '../src/geo/bbox.js';
import { enlargedBounds, quadkeyOf, type Tile, tileBounds } from '../src/geo/tile-schemes.js';
import { fillDirectly, fillPlain, SPATIAL_REGION, spatialPointParts } from './data.js';
import { type BenchEngine, type Goals, openStorage, spaceKey, type StorageSpec } from './engines.js';
import type { FloorReads, SpatialFloorRead } from './floor-reads.js';
import type { BenchHub } from './hub-server.js';
import { countFeatures, type HubClient } from './http.js';
import { type Measured, perSecond, type Rate } from './measure.js';
import type { PlainSpatialRead } from './plain-floor.js';
import { plainTable } from './plain-tables.js';
import { readCpuSeconds, withCpu } from './process-cpu.js';
import { databaseCpuPerRequest, type ReadRow, type ReadTables, throughputRatio } from './read-tables.js';
import { side, takeTurns } from './turns.js';

export const CONNECTIONS = 16;
/** Reads rotated through in each figure: enough that no two connections ask the same thing at once. */
const ROTATION = 200;
const DEFAULT_LIMIT = 30_000;
/** Issue 22, fair under load: no large box waits more than twice as long as the median one, on either engine. */
const FAIRNESS = 2;
/** The plain floor's table of the points (plain-tables.ts). */
const PLAIN_POINTS = 'plain_points';

export interface SpatialBench {
  hub: BenchHub;
  client: HubClient;
  reads: FloorReads;
  engine: BenchEngine;
  /** Where the plain floor's table goes. */
  plainSpec: StorageSpec;
  points: number;
  fillBatch: number;
  seconds: number;
  tables: ReadTables;
  note(text: string): void;
  log(text: string): void;
}

/** Which of the engine's goals a figure is checked against: issue 12 against the own-SQL floor, issue 22 against the plain one. */
type GoalName = keyof Goals['spatial'];

interface Figure {
  figure: string;
  /** Hub paths, rotated through. */
  paths: string[];
  /** The same reads on storage. */
  floor: SpatialFloorRead[];
  /** The same reads on the plain table. */
  plain: PlainSpatialRead[];
  goal?: GoalName;
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
export function boxes(side: number): BBox[] {
  const [west, south, east, north] = SPATIAL_REGION;
  return spread(ROTATION).map(([lon, lat]): BBox => {
    const x = Math.min(lon, east - side);
    const y = Math.min(lat, north - side);
    return [Math.max(west, x), Math.max(south, y), Math.max(west, x) + side, Math.max(south, y) + side];
  });
}

/** The web tiles of a level that hold the spread positions. */
export function tiles(level: number): Tile[] {
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
export function sideFor(count: number, points: number): number {
  const [west, south, east, north] = SPATIAL_REGION;
  return Math.sqrt((count / points) * (east - west) * (north - south));
}

/** Fills a space of the hub with `points` of the spatial region straight through a second storage connection. */
export async function fillSpatialPoints(hub: BenchHub, engine: BenchEngine, space: string, points: number, fillBatch: number): Promise<Rate> {
  const storage = await openStorage(engine.hubSpec(hub.dataDir));
  try {
    return await fillDirectly(storage, await spaceKey(storage, space), points, fillBatch, (i, timestamp) => spatialPointParts(i, space, timestamp));
  } finally {
    await storage.close();
  }
}

async function fill(bench: SpatialBench, space: string): Promise<void> {
  const filled = await fillSpatialPoints(bench.hub, bench.engine, space, bench.points, bench.fillBatch);
  bench.note(`Spatial: filled ${bench.points} points over ${SPATIAL_REGION.join(',')} directly in ${filled.seconds.toFixed(1)} s.`);
  bench.log(`spatial: loading the plain floor's table ${PLAIN_POINTS}`);
  await fillPlain(await plainTable(bench.plainSpec, PLAIN_POINTS), bench.points, bench.fillBatch, (i, timestamp) => spatialPointParts(i, space, timestamp));
  await bench.engine.afterBulkLoad?.();
}

/**
 * A run of the figure's requests over HTTP, with the hub's (and its database's) CPU: `amount` requests, or for
 * `seconds` when none is given. A run for a time drops the answers still coming when it ends, whose work the CPU
 * window holds; with requests of seconds each (large boxes) that is a good part of the run. `bytes` counts the
 * answers, headers included.
 */
export async function overHttp(hub: BenchHub, serverPid: number | undefined, figure: Pick<Figure, 'figure' | 'paths'>,
  how: { amount: number } | { seconds: number }): Promise<Measured & { p50: number; p99: number; bytes: number }> {
  let next = 0;
  return withCpu(() => readCpuSeconds(hub.pid), serverPid, async () => {
    const result = await autocannon({
      url: hub.origin,
      connections: CONNECTIONS,
      ...('amount' in how ? { amount: how.amount } : { duration: how.seconds }),
      // A run of an amount ends at the first sample after its last answer: frequent samples keep its time exact.
      sampleInt: 20,
      headers: { authorization: `Bearer ${hub.token}` },
      requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: figure.paths[next++ % figure.paths.length] }) }],
    });
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`${figure.figure}: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
    const requests = result.requests.total;
    return { items: requests, requests, seconds: result.duration, p50: result.latency.p50, p99: result.latency.p99, bytes: result.throughput.total };
  });
}

/**
 * Requests a figure's warm-up asks at least, unless that takes longer than WARM_UP_SECONDS. V8 optimizes a function
 * once it has run enough of its bytecode, so the functions of a request's path reach optimized code after a few
 * thousand requests: a fresh hub's CPU per small box fell from 1.33 to 0.74, 0.50 and 0.34 ms over its first 1.5 s
 * windows (about 470, 1,140, 1,550 and 1,800 requests each), then stayed at 0.30-0.50 (docs/decisions.md,
 * "Spatial figures warm the hub's code up first"). A hub serves for days; its first seconds are not what it costs.
 */
const WARM_UP_REQUESTS = 5_000;
const WARM_UP_SECONDS = 6;

/** The warm-up of a figure: a turn's time, then more until WARM_UP_REQUESTS; the last pass's rate sizes the turns. */
async function warmUp(bench: SpatialBench, figure: Figure): Promise<Measured> {
  const first = await overHttp(bench.hub, bench.engine.serverPid?.(), figure, { seconds: bench.seconds });
  const more = Math.min(WARM_UP_REQUESTS - first.requests, Math.round(perSecond(first) * WARM_UP_SECONDS));
  return more > 2 * CONNECTIONS ? overHttp(bench.hub, bench.engine.serverPid?.(), figure, { amount: more }) : first;
}

/**
 * The plain floor must find what the hub finds: the first read of a box figure is counted on both sides. SQLite's
 * R*Tree keeps 32-bit bounds rounded outward and the plain floor tests nothing more, so there a point within about
 * a millionth of a degree of the box's edge may be found by the floor alone.
 */
async function checkCounts(bench: SpatialBench, figure: Figure): Promise<void> {
  const hubCount = countFeatures(await bench.client.expect(200, 'GET', figure.paths[0]));
  const plain = await bench.reads.run('plainSpatial', { spec: bench.plainSpec, table: PLAIN_POINTS, reads: [figure.plain[0]], seconds: 0, concurrency: 1 });
  const slack = bench.plainSpec.engine === 'sqlite' ? 2 : 0;
  if (Math.abs(plain.count - hubCount) > slack) throw new Error(`${figure.figure}: the hub found ${hubCount} features, the plain floor ${plain.count}`);
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
  const boxReads = (all: BBox[]) => all.map((box) => ({ box, limit: DEFAULT_LIMIT }));
  const figures: Figure[] = [
    { figure: 'Small bbox (about 100 features)', goal: 'smallBox', paths: small.map(boxPath), floor: boxReads(small), plain: boxReads(small) },
    { figure: 'Large bbox (about 10,000 features)', goal: 'largeBox', paths: large.map(boxPath), floor: boxReads(large), plain: boxReads(large) },
    {
      figure: 'Web tiles z14 as GeoJSON', paths: z14.map((tile) => `${base}/tile/web/14_${tile.x}_${tile.y}`),
      floor: boxReads(z14.map((tile) => tileBounds(tile))), plain: boxReads(z14.map((tile) => tileBounds(tile))),
    },
    {
      figure: 'Web tiles z14 as MVT', goal: 'vectorTile', paths: z14.map((tile) => `${base}/tile/web/14_${tile.x}_${tile.y}.mvt`),
      floor: z14.map((tile) => ({ box: tileBounds(tile), limit: DEFAULT_LIMIT, tile: vectorRequest(space, tile) })),
      plain: z14.map((tile) => ({ box: tileBounds(tile), limit: DEFAULT_LIMIT, tile: { z: 14, x: tile.x, y: tile.y, layer: space } })),
    },
    {
      figure: 'Quadkey tiles z13, margin=20&clip=false',
      paths: z13.map((tile) => `${base}/tile/quadkey/${quadkeyOf(13, tile.x, tile.y)}?margin=20&clip=false`),
      floor: boxReads(z13.map((tile) => enlargedBounds(tile, 20))), plain: boxReads(z13.map((tile) => enlargedBounds(tile, 20))),
    },
  ];
  const spec = bench.engine.hubSpec(bench.hub.dataDir);
  for (const figure of figures) {
    bench.log(`spatial: ${figure.figure}`);
    if (!figure.plain[0].tile) await checkCounts(bench, figure);
    const plainRun = (seconds: number) => bench.reads.run('plainSpatial', {
      spec: bench.plainSpec, table: PLAIN_POINTS, reads: figure.plain, seconds, concurrency: CONNECTIONS,
    });
    // A first pass warms the caches of the hub's table and of the plain one, and the hub's code (warmUp), and tells how
    // many requests the hub answers in a turn's time (at least two per connection); then the sides take turns and each
    // side's best turn counts. The plain floor warms as long as the hub did: each backend faults in every page of the
    // shared buffers it touches first, and at 1,000,000 points after a half-turn the floor's large box still cost its
    // database 139 ms per box, 115 ms after this warm-up (docs/decisions.md, "Benchmark floors").
    const warmingSince = performance.now();
    const warm = await warmUp(bench, figure);
    await plainRun(Math.max(bench.seconds / 2, (performance.now() - warmingSince) / 1000));
    const amount = Math.max(2 * CONNECTIONS, Math.round(perSecond(warm) * bench.seconds));
    const sides = {
      hub: side(() => overHttp(bench.hub, bench.engine.serverPid?.(), figure, { amount })),
      own: side(() => bench.reads.run('spatial', { spec, spaceId: space, reads: figure.floor, seconds: bench.seconds, concurrency: CONNECTIONS })),
      plain: side(() => plainRun(bench.seconds)),
    };
    await takeTurns(2, [sides.hub, sides.own, sides.plain]);
    const hub = sides.hub.best();
    const plain = sides.plain.best();
    const row: ReadRow = {
      section: 'spatial', figure: figure.figure, unit: 'requests/s', hub, plain, own: sides.own.best(),
      note: `${CONNECTIONS} connections; hub p50 ${hub.p50} ms, p99 ${hub.p99} ms; answers ${kilobytes(hub.bytes / hub.requests)} (hub, with headers), ${kilobytes(plain.bytes / plain.requests)} (plain)`,
    };
    bench.tables.add(row);
    if (figure.goal) addGoals(bench, row, figure.goal);
    if (figure.goal === 'largeBox') {
      bench.tables.goal({ label: `Large bbox: p99 latency vs p50 at ${CONNECTIONS} connections (issue 22)`, value: hub.p99 / hub.p50, bound: FAIRNESS, at: 'most' });
    }
  }
}

const kilobytes = (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`;

const GOAL_NAMES: Record<GoalName, string> = { smallBox: 'Small bbox', largeBox: 'Large bbox', vectorTile: 'MVT tile' };

/** Issue 12's goal against the own-SQL floor; issue 22's against the plain floor, and for large boxes the database's CPU too. */
function addGoals(bench: SpatialBench, row: ReadRow, goal: GoalName): void {
  const { spatial, plain } = bench.engine.goals;
  bench.tables.goal({ label: `${GOAL_NAMES[goal]} vs own-SQL floor (issue 12)`, value: throughputRatio(row, 'own'), bound: spatial[goal], at: 'least' });
  if (!plain) return;
  bench.tables.goal({ label: `${GOAL_NAMES[goal]} vs plain floor (issue 22)`, value: throughputRatio(row, 'plain'), bound: plain[goal], at: 'least' });
  const hubCpu = databaseCpuPerRequest(row.hub);
  const plainCpu = databaseCpuPerRequest(row.plain);
  if (goal === 'largeBox' && hubCpu !== undefined && plainCpu !== undefined) {
    bench.tables.goal({ label: 'Large bbox: database CPU per request vs plain floor (issue 22)', value: hubCpu / plainCpu, bound: plain.largeBoxDatabaseCpu, at: 'most' });
  }
}
