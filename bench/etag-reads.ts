// Benchmark section `etag`: reads of an unchanged 10,000-feature space repeated with If-None-Match (304), against the same reads answered in full (200).
import autocannon from 'autocannon';
import { SPATIAL_REGION } from './data.js';
import type { BenchHub } from './hub-server.js';
import { readCpuSeconds } from './process-cpu.js';
import type { HubClient } from './http.js';
import { perSecond, type Rate } from './measure.js';

const FEATURES = 10_000;
const CONNECTIONS = 8;
/** Measured turns of each path, after one to warm up. */
const TURNS = 2;

export interface EtagBench {
  hub: BenchHub;
  client: HubClient;
  seconds: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; note?: string }): void;
  log(text: string): void;
}

/** Evenly spread points over the region (R2 sequence), with a few properties as a client would store. */
function points(): object[] {
  const [west, south, east, north] = SPATIAL_REGION;
  return Array.from({ length: FEATURES }, (_, i) => ({
    type: 'Feature', id: `p${i}`,
    geometry: { type: 'Point', coordinates: [west + ((0.31 + i * 0.7548776662466927) % 1) * (east - west), south + ((0.17 + i * 0.5698402909980532) % 1) * (north - south)] },
    properties: { name: `point ${i}`, n: i, kind: ['shop', 'school', 'park'][i % 3] },
  }));
}

/** The web tile of `level` holding a position. */
function webTile(level: number, lon: number, lat: number): string {
  const size = 2 ** level;
  const radians = (lat * Math.PI) / 180;
  const x = Math.floor(((lon + 180) / 360) * size);
  const y = Math.floor(((1 - Math.log(Math.tan(radians) + 1 / Math.cos(radians)) / Math.PI) / 2) * size);
  return `${level}_${x}_${y}`;
}

interface Load {
  rate: Rate;
  /** Hub CPU (user and system) per request, in ms. */
  cpuMs: number;
  statuses: Record<string, number>;
}

async function load(bench: EtagBench, path: string, headers: Record<string, string>): Promise<Load> {
  const cpu = readCpuSeconds(bench.hub.pid);
  const result = await autocannon({
    url: bench.hub.origin + path,
    connections: CONNECTIONS,
    duration: bench.seconds,
    headers: { authorization: `Bearer ${bench.hub.token}`, ...headers },
  });
  const used = readCpuSeconds(bench.hub.pid) - cpu;
  if (result.errors > 0) throw new Error(`${path}: ${result.errors} errors`);
  const statuses: Record<string, number> = {};
  for (const [status, { count }] of Object.entries(result.statusCodeStats)) statuses[status] = count;
  return { rate: { items: result.requests.total, seconds: result.duration }, cpuMs: (used * 1000) / result.requests.total, statuses };
}

/** The highest rate and the lowest CPU per request of the turns (not necessarily the same turn). */
function best(loads: Load[]): Load {
  const fastest = loads.reduce((a, b) => (perSecond(a.rate) >= perSecond(b.rate) ? a : b));
  return { ...fastest, cpuMs: Math.min(...loads.map((loaded) => loaded.cpuMs)) };
}

function expectOnly(path: string, loaded: Load, status: string): void {
  const others = Object.keys(loaded.statuses).filter((code) => code !== status);
  if (others.length > 0) throw new Error(`${path}: expected only ${status}, got ${JSON.stringify(loaded.statuses)}`);
}

export async function etagReads(bench: EtagBench): Promise<void> {
  const created = await bench.client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench etag' }), { 'content-type': 'application/json' });
  const space = (JSON.parse(created.toString()) as { id: string }).id;
  const features = points();
  bench.log(`etag: writing ${FEATURES} points`);
  for (let i = 0; i < FEATURES; i += 1000) {
    await bench.client.expect(204, 'PUT', `/hub/spaces/${space}/features`, JSON.stringify({ type: 'FeatureCollection', features: features.slice(i, i + 1000) }),
      { accept: 'application/x-empty' });
  }
  const [west, south, east, north] = SPATIAL_REGION;
  // A tenth of the region's area: about 1,000 of the evenly spread points.
  const side = Math.sqrt(0.1);
  const box = `west=${west}&south=${south}&east=${west + side * (east - west)}&north=${south + side * (north - south)}`;
  const tile = webTile(7, (west + east) / 2, (south + north) / 2);
  const reads = [
    { figure: 'bbox of about 1,000 features', path: `/hub/spaces/${space}/bbox?${box}` },
    { figure: 'bbox of all 10,000 features', path: `/hub/spaces/${space}/bbox?west=${west}&south=${south}&east=${east}&north=${north}` },
    { figure: 'iterate, limit=1000', path: `/hub/spaces/${space}/iterate?limit=1000` },
    { figure: `GeoJSON tile web/${tile}`, path: `/hub/spaces/${space}/tile/web/${tile}` },
    { figure: `MVT tile web/${tile}`, path: `/hub/spaces/${space}/tile/web/${tile}.mvt` },
    { figure: 'statistics', path: `/hub/spaces/${space}/statistics` },
  ];
  for (const read of reads) {
    const first = await bench.client.request('GET', read.path);
    if (first.status !== 200) throw new Error(`${read.path} answered ${first.status}`);
    const etag = first.headers.etag;
    if (typeof etag !== 'string') throw new Error(`${read.path} has no ETag`);
    bench.log(`etag: ${read.figure} (${first.body.length} bytes)`);
    // The two paths take turns after a warm-up of each, and each keeps its best turn: other work on the machine costs both alike.
    const turns: Array<{ full: Load; cached: Load }> = [];
    for (let turn = 0; turn < TURNS + 1; turn++) {
      const full = await load(bench, read.path, {});
      expectOnly(read.path, full, '200');
      const cached = await load(bench, read.path, { 'if-none-match': etag });
      expectOnly(read.path, cached, '304');
      if (turn > 0) turns.push({ full, cached });
    }
    const full = best(turns.map((turn) => turn.full));
    const cached = best(turns.map((turn) => turn.cached));
    bench.addRow({
      figure: `${read.figure}: 304 vs 200`, unit: 'requests/s', http: cached.rate, floor: full.rate,
      note: `floor: the same read answered in full (${(first.body.length / 1024).toFixed(0)} KiB); hub CPU per request 304 ${cached.cpuMs.toFixed(3)} ms, 200 ${full.cpuMs.toFixed(3)} ms`,
    });
  }
}
