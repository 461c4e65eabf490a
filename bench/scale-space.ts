// Bench section `scale` (issue 22, part 3): one space of --size features loaded over HTTP, then its small boxes, statistics and iterate, with RSS and disk size, against goals.
import type { BBox } from '../src/geo/bbox.js';
import type { Position } from '../src/geo/geometry.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { featureTexts } from '../src/hub/feature-text.js';
import { scatteredPlace, scatteredPointFeature, scatteredPointParts } from './data.js';
import type { BenchEngine } from './engines.js';
import type { FloorReads } from './floor-reads.js';
import { type BoxTiming, boxWaits, machineCounters, waitsTable, watchOwnPauses } from './box-waits.js';
import { type BenchHub, readMemory, watchMemory } from './hub-server.js';
import { countFeatures, type HubClient, iterateHttpTimed } from './http.js';
import { type Measured, perSecond } from './measure.js';
import { plainTable } from './plain-tables.js';
import { collectProbe, hubProcesses, PROBE_HEADER } from './probe-records.js';
import { readCpuSeconds, withCpu } from './process-cpu.js';
import { ingestOverHttp, type IngestStep } from './scale-ingest.js';
import { side, takeTurns } from './turns.js';
import type { StorageSpec } from './engines.js';

const BATCH = 1000;
const IN_FLIGHT = 2;
const BOXES = 200;
/** Features a small box holds on average: its side follows from the size of the space. */
const BOX_FEATURES = 100;
const STATISTICS_CALLS = 5;
/** Boxes shown one by one in the probe's table: the p99 of 200 is the second slowest. */
const SLOWEST_BOXES = 8;
const ITERATE_LIMIT = 100_000;
const PLAIN_TABLE = 'plain_scale';
const PLAIN_BATCH = 10_000;
const WORLD_AREA = 360 * 180;

/** The goals of issue 22, part 3. */
const GOALS = { smallBoxP99Ms: 10, statisticsMs: 200, sqliteIterate: 1_000_000, postgresIterateVsFloor: 0.6, rssMiB: 400 };

export interface ScaleBench {
  hub: BenchHub;
  client: HubClient;
  reads: FloorReads;
  engine: BenchEngine;
  plainSpec: StorageSpec;
  features: number;
  /** Set by `bench --probe`: where the hub's probe writes what each timed box waited for. */
  probeFile?: string;
  afterBulkLoad(): Promise<void>;
  /** Prints a table under a heading with the run's other tables. */
  table(heading: string, lines: string[][]): void;
  log(text: string): void;
}

const number = (value: number) => Math.round(value).toLocaleString('en-US');
const mibOf = (kib: number) => kib / 1024;
const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;
const ms = (value: number) => value.toFixed(value >= 100 ? 0 : 1);
/** CPU per item in µs, or in ms from 10 ms on. */
const perItem = (seconds: number, items: number) => {
  const micros = (seconds * 1e6) / items;
  return micros >= 10_000 ? `${(micros / 1000).toFixed(0)} ms` : `${micros.toFixed(0)} µs`;
};

/** Steps of a million, or quarters of a smaller space, so that a change of rate with size shows. */
const stepOf = (features: number) => (features >= 4_000_000 ? 1_000_000 : Math.max(1, Math.ceil(features / 4)));

function percentile(sorted: number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)];
}

/** p50 / p99 of a pass over the boxes, as the hub's figure is given. */
function passText(latencies: number[]): string {
  if (latencies.length < BOXES) return `${latencies.length} reads`;
  const sorted = [...latencies].sort((a, b) => a - b);
  return `${ms(percentile(sorted, 0.5))} / ${ms(percentile(sorted, 0.99))} ms`;
}

/** Random boxes over the world, each of the side that holds BOX_FEATURES of the space's evenly spread features on average. */
function smallBoxes(features: number, seed: number): BBox[] {
  const sideDegrees = Math.sqrt((BOX_FEATURES * WORLD_AREA) / features);
  const random = seededRandom(seed);
  return Array.from({ length: BOXES }, () => {
    const west = -180 + random() * (360 - sideDegrees);
    const south = -90 + random() * (180 - sideDegrees);
    return [west, south, west + sideDegrees, south + sideDegrees];
  });
}

/** 14 bits of each coordinate interleaved: neighbours on this Z-order curve are neighbours on the map. */
function zOrder([x, y]: Position): number {
  const cell = (value: number, range: number) => Math.min(16383, Math.floor(((value + range / 2) / range) * 16384));
  let key = 0;
  const [cx, cy] = [cell(x, 360), cell(y, 180)];
  for (let bit = 13; bit >= 0; bit--) key = key * 4 + ((cx >> bit) & 1) * 2 + ((cy >> bit) & 1);
  return key;
}

/**
 * The plain table gets the features in Z-order of their places, so its R*Tree or GiST is built with neighbours
 * together, as an operator loading a table for reads would sort it: a floor is the least the reads cost. Its
 * per-step load rate is therefore that of a sorted load. Keys (28 bits) and indexes (24 bits) share one double.
 */
async function loadPlain(bench: ScaleBench, space: string, step: number): Promise<number[]> {
  if (bench.features >= 2 ** 24) throw new Error('the scale section orders at most 16,777,215 features');
  const order = new Float64Array(bench.features);
  for (let i = 0; i < bench.features; i++) order[i] = zOrder(scatteredPlace(i)) * 2 ** 24 + i;
  order.sort();
  const table = await plainTable(bench.plainSpec, PLAIN_TABLE);
  const rates: number[] = [];
  const timestamp = Date.now();
  for (let start = 0; start < bench.features; start += step) {
    const end = Math.min(start + step, bench.features);
    const began = performance.now();
    for (let at = start; at < end; at += PLAIN_BATCH) {
      const rows = [];
      for (let k = at; k < Math.min(at + PLAIN_BATCH, end); k++) rows.push(featureTexts(scatteredPointParts(order[k] % 2 ** 24, space, timestamp)).stored);
      await table.add(rows);
    }
    rates.push(((end - start) * 1000) / (performance.now() - began));
  }
  await table.finish();
  return rates;
}

/**
 * One connection, the boxes one after another; the latency of each and the hub's CPU over all of them. With the
 * probe, each box is labelled for the hub's records and the machine's counters are read around it, outside its time.
 */
async function timeBoxes(bench: ScaleBench, space: string, boxes: BBox[], probed: boolean) {
  const byBox: number[] = [];
  const timings: BoxTiming[] = [];
  let features = 0;
  const serverPid = bench.engine.serverPid?.();
  const run = await withCpu(() => readCpuSeconds(bench.hub.pid), serverPid, async () => {
    const began = performance.now();
    for (const [index, [west, south, east, north]] of boxes.entries()) {
      const label = boxLabel(index);
      const before = probed ? machineCounters(serverPid) : undefined;
      const start = performance.now();
      const body = await bench.client.expect(200, 'GET', `/hub/spaces/${space}/bbox?west=${west}&south=${south}&east=${east}&north=${north}`, undefined,
        probed ? { [PROBE_HEADER]: label } : undefined);
      const latencyMs = performance.now() - start;
      byBox.push(latencyMs);
      const found = countFeatures(body);
      if (before) timings.push({ label, start: performance.timeOrigin + start, latencyMs, features: found, before, after: machineCounters(serverPid) });
      features += found;
    }
    return { items: boxes.length, requests: boxes.length, seconds: (performance.now() - began) / 1000 };
  });
  return { byBox, latencies: [...byBox].sort((a, b) => a - b), features: features / boxes.length, run, timings };
}

const boxLabel = (index: number) => `box ${index}`;

/** Points of the warm-up's own space, and the small boxes asked of it (at BOX_FEATURES each). */
const WARM_UP_POINTS = 20_000;
const WARM_UP_BOXES = 3_000;

/**
 * Warms the hub's code up with small boxes of a space of its own, then deletes it: V8 optimizes a read's functions
 * after a few thousand reads, and a fresh hub's CPU per small box is three to four times a warm one's (docs/decisions.md,
 * "Spatial figures warm the hub's code up first"). The timed boxes' space is not read, so its pages stay as cold as
 * they were.
 */
async function warmUpBoxes(bench: ScaleBench): Promise<void> {
  const { client } = bench;
  bench.log(`scale: warming the hub up with ${number(WARM_UP_BOXES)} small boxes of a space of ${number(WARM_UP_POINTS)} points`);
  const created = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench scale warm-up' }), { 'content-type': 'application/json' });
  const space = (JSON.parse(created.toString()) as { id: string }).id;
  for (let start = 0; start < WARM_UP_POINTS; start += BATCH) {
    const features = Array.from({ length: BATCH }, (_, i) => scatteredPointFeature(start + i));
    await client.expect(204, 'PUT', `/hub/spaces/${space}/features`, JSON.stringify({ type: 'FeatureCollection', features }), { accept: 'application/x-empty' });
  }
  const boxes = smallBoxes(WARM_UP_POINTS, 3);
  for (let done = 0; done < WARM_UP_BOXES; done += boxes.length) await timeBoxes(bench, space, boxes, false);
  await client.expect(204, 'DELETE', `/hub/spaces/${space}`);
}

export async function scaleSpace(bench: ScaleBench): Promise<void> {
  const { client, hub, engine, features, log } = bench;
  const created = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench scale' }), { 'content-type': 'application/json' });
  const space = (JSON.parse(created.toString()) as { id: string }).id;
  const step = stepOf(features);
  const memory = watchMemory(hub.pid);
  const startRss = readMemory(hub.pid).rssKiB;

  log(`scale: PUT ${number(features)} points over HTTP, ${BATCH} per request, ${IN_FLIGHT} in flight`);
  const started = performance.now();
  const steps = await ingestOverHttp({
    client, path: `/hub/spaces/${space}/features`, count: features, batch: BATCH, inFlight: IN_FLIGHT, step, hubPid: hub.pid, serverPid: engine.serverPid?.(),
    body: (start, end) => Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: Array.from({ length: end - start }, (_, i) => scatteredPointFeature(start + i)) })),
    diskBytes: async () => (await engine.diskSize(hub.dataDir)).bytes,
    onStep: (done) => log(`scale: ${number(done.total)} features, ${number(done.features / done.seconds)} features/s, RSS ${mibOf(done.rssKiB).toFixed(0)} MiB, ${gb(done.diskBytes)}`),
  });
  const ingestSeconds = (performance.now() - started) / 1000;
  const ingestPeak = memory.stop();
  const disk = await engine.diskSize(hub.dataDir);

  log(`scale: loading the plain table ${PLAIN_TABLE}`);
  const plainRates = await loadPlain(bench, space, step);
  await bench.afterBulkLoad();
  // The plain load can outlast the hub's keep-alive timeout: a socket it closed meanwhile would fail the next request (EPIPE).
  client.close();

  const readMemoryWatch = watchMemory(hub.pid);
  await warmUpBoxes(bench);
  log(`scale: ${BOXES} small boxes at one connection`);
  const boxes = smallBoxes(features, 22);
  // A warm-up at other places, so the first timed box does not pay for the statements' preparation.
  await timeBoxes(bench, space, smallBoxes(features, 7).slice(0, 20), false);
  if (bench.probeFile) await collectProbe(bench.probeFile, hubProcesses(hub.pid));
  const benchPauses = watchOwnPauses();
  const small = await timeBoxes(bench, space, boxes, bench.probeFile !== undefined);
  const waits = bench.probeFile ? boxWaits(small.timings, await collectProbe(bench.probeFile, hubProcesses(hub.pid)), benchPauses.stop()) : undefined;
  // The same boxes again, at once: a box slow both times is slow for its data (its pages), a box slow once for its moment.
  const again = await timeBoxes(bench, space, boxes, false);
  // At one connection the floor's reads go through the boxes in order, so its first pass is the boxes read once, as the
  // hub's timed pass, and its second the boxes read again; the rest of its 2 s gives the mean.
  const plainBoxes = await bench.reads.run('plainSpatial', {
    spec: bench.plainSpec, table: PLAIN_TABLE, reads: boxes.map((box) => ({ box, limit: 30_000 })), seconds: 2, concurrency: 1,
  });
  const plainPass = (pass: number) => plainBoxes.latenciesMs.slice(pass * BOXES, (pass + 1) * BOXES);
  const [plainOnce, plainAgain] = [plainPass(0), plainPass(1)];

  log(`scale: ${STATISTICS_CALLS} statistics calls`);
  const statisticsMs: number[] = [];
  const statistics = await withCpu(() => readCpuSeconds(hub.pid), engine.serverPid?.(), async () => {
    for (let call = 0; call < STATISTICS_CALLS; call++) {
      const start = performance.now();
      const body = await client.expect(200, 'GET', `/hub/spaces/${space}/statistics`);
      statisticsMs.push(performance.now() - start);
      const count = (JSON.parse(body.toString()) as { count: { value: number } }).count.value;
      if (count !== features) throw new Error(`statistics count ${count} of ${features}`);
    }
    return { items: STATISTICS_CALLS, requests: STATISTICS_CALLS, seconds: statisticsMs.reduce((sum, value) => sum + value, 0) / 1000 };
  });

  log(`scale: iterate over HTTP and on the plain table, limit ${ITERATE_LIMIT}`);
  const pageRss: number[] = [];
  const sides = {
    hub: side((turn) => withCpu(() => readCpuSeconds(hub.pid), engine.serverPid?.(), async () => {
      const began = performance.now();
      const pages = await iterateHttpTimed(client, space, ITERATE_LIMIT, turn === 0 ? () => { pageRss.push(readMemory(hub.pid).rssKiB); } : undefined);
      return { items: features, requests: pages, seconds: (performance.now() - began) / 1000 };
    })),
    plain: side(() => bench.reads.run('plainIterate', { spec: bench.plainSpec, table: PLAIN_TABLE, limit: ITERATE_LIMIT, seconds: 0, expected: features })),
  };
  await takeTurns(2, [sides.hub, sides.plain]);
  const readPeak = readMemoryWatch.stop();
  const iterate = { hub: sides.hub.best(), plain: sides.plain.best() };

  printIngest(bench, steps, plainRates, ingestSeconds);
  const peakMiB = mibOf(Math.max(ingestPeak.rssKiB, readPeak.rssKiB));
  const statisticsWorst = Math.max(...statisticsMs);
  const iterateRatio = perSecond(iterate.hub) / perSecond(iterate.plain);
  const p99 = percentile(small.latencies, 0.99);
  const cpuNote = (run: Measured, per: string) =>
    `hub CPU ${perItem(run.cpu.process, run.requests)}${run.cpu.database === undefined ? '' : `, database ${perItem(run.cpu.database, run.requests)}`} per ${per}`;
  bench.table(`Scale: one space of ${number(features)} points (${engine.name})`, [
    ['figure', 'hub', 'plain floor', 'hub/floor', 'note'],
    ['Ingest over HTTP, whole load', `${number(features / ingestSeconds)} features/s`, '', '', `PUT of ${BATCH} per request, ${IN_FLIGHT} in flight; per step above`],
    ['Hub RSS, peak (sampled)', `${peakMiB.toFixed(0)} MiB`, '', '', `at start ${mibOf(startRss).toFixed(0)} MiB; ingest peak ${mibOf(ingestPeak.rssKiB).toFixed(0)}, reads peak ${mibOf(readPeak.rssKiB).toFixed(0)}`],
    ['Disk size', gb(disk.bytes), '', '', Object.entries(disk.parts).map(([part, bytes]) => `${part} ${gb(bytes)}`).join(', ')],
    ['Small bbox p50 / p99 (1 connection)', `${ms(percentile(small.latencies, 0.5))} / ${ms(p99)} ms`, passText(plainOnce),
      `${((perSecond(small.run) / perSecond(plainBoxes)) * 100).toFixed(0)}% (mean)`,
      `${BOXES} boxes, ${small.features.toFixed(0)} features on average; hub mean ${ms(1000 / perSecond(small.run))} ms, floor mean over its ${plainBoxes.requests} reads ${ms(1000 / perSecond(plainBoxes))} ms; ${cpuNote(small.run, 'box')}`],
    ['Small bbox again, same boxes in the same order', passText(again.byBox), passText(plainAgain), '', `right after the first pass; ${cpuNote(again.run, 'box')}`],
    ['/statistics', `${statisticsMs.map(ms).join(', ')} ms`, '', '', `each call, the first one first; ${cpuNote(statistics, 'call')}`],
    [`Iterate (limit ${number(ITERATE_LIMIT)}), whole space`, `${number(perSecond(iterate.hub))} features/s`, `${number(perSecond(iterate.plain))} features/s`,
      `${(iterateRatio * 100).toFixed(0)}%`, `hub RSS per page ${Math.min(...pageRss.map(mibOf)).toFixed(0)}-${Math.max(...pageRss.map(mibOf)).toFixed(0)} MiB; ${cpuNote(iterate.hub, 'page')}`],
  ]);
  const iterateGoal = engine.name === 'postgres'
    ? { label: `iterate ≥ ${GOALS.postgresIterateVsFloor}× its plain floor`, value: `${iterateRatio.toFixed(2)}×`, met: iterateRatio >= GOALS.postgresIterateVsFloor }
    : { label: `iterate ≥ ${number(GOALS.sqliteIterate)} features/s`, value: number(perSecond(iterate.hub)), met: perSecond(iterate.hub) >= GOALS.sqliteIterate };
  const goals = [
    { label: `small bbox p99 ≤ ${GOALS.smallBoxP99Ms} ms`, value: `${ms(p99)} ms`, met: p99 <= GOALS.smallBoxP99Ms },
    { label: `/statistics ≤ ${GOALS.statisticsMs} ms (every call)`, value: `${ms(statisticsWorst)} ms worst`, met: statisticsWorst <= GOALS.statisticsMs },
    iterateGoal,
    { label: `hub RSS under ${GOALS.rssMiB} MiB throughout`, value: `${peakMiB.toFixed(0)} MiB peak`, met: peakMiB < GOALS.rssMiB },
  ];
  const indexOf = new Map(boxes.map((_, index) => [boxLabel(index), index]));
  const againOf = (label: string) => {
    const index = indexOf.get(label);
    if (index === undefined) return undefined;
    return { hubAgainMs: again.byBox[index], floorMs: plainOnce[index], floorAgainMs: plainAgain[index] };
  };
  if (waits) bench.table(`Scale: what the ${BOXES} small boxes waited for (--probe; p50 / p99, then the ${SLOWEST_BOXES} slowest)`, waitsTable(waits, SLOWEST_BOXES, againOf));
  bench.table('Scale goals (issue 22, part 3)', [['goal', 'value', ''], ...goals.map((goal) => [goal.label, goal.value, goal.met ? 'met' : 'MISSED'])]);
}

function printIngest(bench: ScaleBench, steps: IngestStep[], plainRates: number[], seconds: number): void {
  const lines = [['features in the space', 'hub features/s', 'hub CPU per feature', 'database CPU per feature', 'plain table load features/s (Z-order)', 'hub/plain', 'hub RSS', 'disk']];
  steps.forEach((step, index) => {
    const rate = step.features / step.seconds;
    const plain = plainRates[index];
    lines.push([number(step.total), number(rate), perItem(step.hubCpu, step.features), step.databaseCpu === undefined ? 'in process' : perItem(step.databaseCpu, step.features),
      plain === undefined ? '' : number(plain), plain === undefined ? '' : `${((rate / plain) * 100).toFixed(0)}%`, `${mibOf(step.rssKiB).toFixed(0)} MiB`, gb(step.diskBytes)]);
  });
  bench.table(`Scale: ingest step by step over HTTP (${number(seconds)} s in all); plain table loaded ${number(PLAIN_BATCH)} rows per statement in Z-order of place`, lines);
}
