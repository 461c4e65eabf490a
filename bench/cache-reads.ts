// Benchmark section `cache` (issue 24 section 3): a replayed map session with the answer cache against a hub without it, and a cached tile against GET /hub.
import autocannon from 'autocannon';
import type { BenchEngine } from './engines.js';
import { SPATIAL_REGION } from './data.js';
import { type BenchHub, startBenchHub } from './hub-server.js';
import { createSpace, HubClient } from './http.js';
import { perSecond, type Rate } from './measure.js';
import { cpuWindow, readCpuSeconds } from './process-cpu.js';

/** The tiles a map view shows: a block of 5 × 4 web tiles. */
const COLUMNS = 5;
const ROWS = 4;
/** Requests in flight during a session, as a map client loads its tiles. */
const IN_FLIGHT = 6;
/** A write (one moved point in the view) after this many rounds of the view's tiles. */
const ROUNDS_PER_WRITE = 5;

export interface CacheBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  points: number;
  rounds: number;
  turns: number;
  seconds: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

interface Measured {
  rate: Rate;
  /** Hub (and database) CPU per request, in ms. */
  cpuMs: number;
  /** Of which the database server's, in ms (PostgreSQL). */
  databaseMs?: number;
}

const webX = (lon: number, level: number) => Math.floor(((lon + 180) / 360) * 2 ** level);
const webY = (lat: number, level: number) => {
  const radians = (lat * Math.PI) / 180;
  return Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * 2 ** level);
};

/** Evenly spread points over the region (R2 sequence), with a few properties as a client would store. */
function points(count: number, from = 0): object[] {
  const [west, south, east, north] = SPATIAL_REGION;
  return Array.from({ length: count }, (_, index) => {
    const i = from + index;
    return {
      type: 'Feature', id: `p${i}`,
      geometry: { type: 'Point', coordinates: [west + ((0.31 + i * 0.7548776662466927) % 1) * (east - west), south + ((0.17 + i * 0.5698402909980532) % 1) * (north - south)] },
      properties: { name: `point ${i}`, n: i, kind: ['shop', 'school', 'park'][i % 3] },
    };
  });
}

/** CPU seconds of the hub and, on PostgreSQL, of the database server: what one request costs the machine. */
function cpuOf(bench: CacheBench, hub: BenchHub): () => { total: number; database?: number } {
  const stop = cpuWindow(() => readCpuSeconds(hub.pid), bench.engine.serverPid?.());
  return () => {
    const spent = stop();
    return { total: spent.process + (spent.database ?? 0), database: spent.database };
  };
}

/** One replay of the session on `hub`: `rounds` times every tile of the view, a write after every few rounds. */
async function session(bench: CacheBench, hub: BenchHub, client: HubClient, space: string, tiles: string[], turn: number): Promise<Measured> {
  const [west, south] = SPATIAL_REGION;
  const stop = cpuOf(bench, hub);
  const started = performance.now();
  let requests = 0;
  for (let round = 0; round < bench.rounds; round++) {
    if (round % ROUNDS_PER_WRITE === ROUNDS_PER_WRITE - 1) {
      const moved = { type: 'Feature', id: 'moving', geometry: { type: 'Point', coordinates: [west + 4.5 + (round % 7) * 0.01, south + 4 + turn * 0.001] }, properties: { round } };
      await client.expect(200, 'PUT', `/hub/spaces/${space}/features/moving`, JSON.stringify(moved));
      requests++;
    }
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      for (let index = next++; index < tiles.length; index = next++) {
        const response = await client.request('GET', tiles[index]);
        if (response.status !== 200 && response.status !== 204) throw new Error(`${tiles[index]} answered ${response.status}`);
      }
    }));
    requests += tiles.length;
  }
  const seconds = (performance.now() - started) / 1000;
  return { rate: { items: requests, seconds }, cpuMs: (stop().total * 1000) / requests };
}

async function load(bench: CacheBench, hub: BenchHub, path: string, headers: Record<string, string> = {}): Promise<Measured> {
  const stop = cpuOf(bench, hub);
  const result = await autocannon({ url: hub.origin + path, connections: 8, duration: bench.seconds, headers: { authorization: `Bearer ${hub.token}`, ...headers } });
  const spent = stop();
  if (result.errors > 0 || result.non2xx > 0) throw new Error(`${path}: ${result.errors} errors, ${result.non2xx} answers not 2xx`);
  const perRequest = (seconds: number) => (seconds * 1000) / result.requests.total;
  return { rate: { items: result.requests.total, seconds: result.duration }, cpuMs: perRequest(spent.total), databaseMs: spent.database === undefined ? undefined : perRequest(spent.database) };
}

/** The fastest turn, with the CPU per request of the turn that spent the least. */
function best(measured: Measured[]): Measured {
  const fastest = measured.reduce((a, b) => (perSecond(a.rate) >= perSecond(b.rate) ? a : b));
  const cheapest = measured.reduce((a, b) => (a.cpuMs <= b.cpuMs ? a : b));
  return { ...fastest, cpuMs: cheapest.cpuMs, databaseMs: cheapest.databaseMs };
}

/** CPU per request, with the database's share when there is one. */
const cpuText = (measured: Measured) =>
  `${measured.cpuMs.toFixed(3)} ms${measured.databaseMs === undefined ? '' : ` (database ${measured.databaseMs.toFixed(3)})`}`;

const figures = async (client: HubClient) => (JSON.parse((await client.expect(200, 'GET', '/hub')).toString()) as { cache: { hits: number; misses: number; size: number; maxSize: number } }).cache;

export async function cacheReads(bench: CacheBench): Promise<void> {
  const space = await createSpace(bench.client, { title: 'bench cache' });
  bench.log(`cache: writing ${bench.points} points`);
  for (let i = 0; i < bench.points; i += 5000) {
    await bench.client.expect(204, 'PUT', `/hub/spaces/${space}/features`, JSON.stringify({ type: 'FeatureCollection', features: points(Math.min(5000, bench.points - i), i) }),
      { accept: 'application/x-empty' });
  }
  // A level at which the view of 5 × 4 tiles covers about a quarter of the region's width.
  const [west, south, east, north] = SPATIAL_REGION;
  const level = Math.round(Math.log2((360 * COLUMNS * 4) / (east - west)));
  const x0 = webX((west + east) / 2, level) - 2;
  const y0 = webY((south + north) / 2, level) - 2;
  const tiles: string[] = [];
  for (let x = x0; x < x0 + COLUMNS; x++) {
    for (let y = y0; y < y0 + ROWS; y++) tiles.push(`/hub/spaces/${space}/tile/web/${level}_${x}_${y}${(x + y) % 2 === 0 ? '' : '.mvt'}`);
  }
  const sizes = await Promise.all(tiles.map(async (path) => (await bench.client.request('GET', path)).body.length));
  bench.log(`cache: ${tiles.length} tiles of level ${level}, ${Math.round(sizes.reduce((a, b) => a + b, 0) / sizes.length / 1024)} KiB each on average`);

  // The bench's hub runs without the cache (bench.ts); this one, on the same storage, with the default cache.
  const cachedHub = await startBenchHub({ dataDir: bench.hub.dataDir, env: bench.engine.hubEnv(bench.hub.dataDir), token: bench.hub.token });
  const cachedClient = new HubClient(cachedHub.origin, cachedHub.token);
  try {
    const before = await figures(cachedClient);
    const cached: Measured[] = [];
    const uncached: Measured[] = [];
    for (let turn = 0; turn <= bench.turns; turn++) {
      const withCache = await session(bench, cachedHub, cachedClient, space, tiles, turn);
      const without = await session(bench, bench.hub, bench.client, space, tiles, turn);
      // The first turn warms both up.
      if (turn > 0) {
        cached.push(withCache);
        uncached.push(without);
      }
    }
    const after = await figures(cachedClient);
    const hits = after.hits - before.hits;
    const lookups = hits + after.misses - before.misses;
    const session1 = best(cached);
    const session0 = best(uncached);
    bench.addRow({
      figure: `map session, ${tiles.length} tiles × ${bench.rounds} rounds, a write every ${ROUNDS_PER_WRITE}: cache vs none`, unit: 'requests/s',
      http: session1.rate, floor: session0.rate,
      note: `floor: a hub on the same storage with HUB_CACHE_SIZE=0; hit rate ${((hits / lookups) * 100).toFixed(1)}%; CPU per request (hub${bench.engine.serverPid ? ' + database' : ''}) ${session1.cpuMs.toFixed(3)} ms cached, ${session0.cpuMs.toFixed(3)} ms uncached; cache ${Math.round(after.size / 1024)} KiB of ${Math.round(after.maxSize / 1024 ** 2)} MiB`,
    });

    // One tile of each format (the view alternates them), each against GET /hub in the same turns.
    const formats = [
      { name: 'GeoJSON', index: tiles.findIndex((path) => !path.endsWith('.mvt')) },
      { name: 'MVT', index: tiles.findIndex((path) => path.endsWith('.mvt')) },
    ];
    const byId = `/hub/spaces/${space}/features/p1`;
    const tileTurns: Measured[][] = formats.map(() => []);
    const infoTurns: Measured[] = [];
    const byIdTurns: Measured[] = [];
    const gzipTurns: Measured[] = [];
    for (let turn = 0; turn <= bench.turns; turn++) {
      const tileLoads = [];
      for (const format of formats) tileLoads.push(await load(bench, cachedHub, tiles[format.index]));
      const infoLoad = await load(bench, cachedHub, '/hub');
      const byIdLoad = await load(bench, cachedHub, byId);
      // As a browser asks: every one sends Accept-Encoding with gzip.
      const gzipLoad = await load(bench, cachedHub, tiles[formats[0].index], { 'accept-encoding': 'gzip, deflate, br' });
      if (turn > 0) {
        tileLoads.forEach((tileLoad, i) => tileTurns[i].push(tileLoad));
        infoTurns.push(infoLoad);
        byIdTurns.push(byIdLoad);
        gzipTurns.push(gzipLoad);
      }
    }
    const infoBest = best(infoTurns);
    const byIdBest = best(byIdTurns);
    const byIdNote = `GET by id (one storage lookup, as a cached tile makes) ${Math.round(perSecond(byIdBest.rate)).toLocaleString('en-US')} requests/s, ${Math.round((perSecond(byIdBest.rate) / perSecond(infoBest.rate)) * 100)}% of GET /hub, ${cpuText(byIdBest)}`;
    for (const [i, format] of formats.entries()) {
      const tileBest = best(tileTurns[i]);
      // Statements per cached tile (PostgreSQL), from one more turn of tiles alone; the counter itself reads one.
      let statements = '';
      if (bench.engine.statementsDone) {
        const before = await bench.engine.statementsDone();
        const counted = await load(bench, cachedHub, tiles[format.index]);
        statements = `; ${((await bench.engine.statementsDone() - before - 1) / counted.rate.items).toFixed(3)} statements per tile`;
      }
      bench.addRow({
        figure: `cached ${format.name} tile (${(sizes[format.index] / 1024).toFixed(1)} KiB) vs GET /hub`, unit: 'requests/s', http: tileBest.rate, floor: infoBest.rate, goal: 0.8,
        note: `same hub, taking turns; CPU per request ${cpuText(tileBest)} tile, ${cpuText(infoBest)} GET /hub${statements}${i === 0 ? `; for scale, ${byIdNote}` : ''}`,
      });
    }
    const gzipBest = best(gzipTurns);
    bench.addRow({
      figure: 'the cached GeoJSON tile asked for with Accept-Encoding: gzip (as browsers ask) vs GET /hub', unit: 'requests/s', http: gzipBest.rate, floor: infoBest.rate,
      note: `same hub, taking turns; CPU per request ${cpuText(gzipBest)} tile, gzipped once and kept with the entry`,
    });
    bench.note(`cache: the session replays the same ${tiles.length} tiles (half GeoJSON, half MVT) with ${IN_FLIGHT} in flight; each write makes the next round miss on every tile (the space's revision is in the key).`);
  } finally {
    cachedClient.close();
    await cachedHub.stop();
  }
}
