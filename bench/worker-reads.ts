// Benchmark section `workers`: small boxes and z14 web tiles (GeoJSON and MVT) from a hub with a worker per core against the same hub in one process, taking turns.
import { availableParallelism } from 'node:os';
import type { BBox } from '../src/geo/bbox.js';
import type { BenchEngine } from './engines.js';
import { type BenchHub, startBenchHub } from './hub-server.js';
import type { HubClient } from './http.js';
import { type Measured, perSecond } from './measure.js';
import { cpuWindow, machineCpuSeconds, ownCpuSeconds } from './process-cpu.js';
import { boxes, CONNECTIONS, fillSpatialPoints, overHttp, sideFor, tiles } from './spatial-reads.js';
import { side, takeTurns } from './turns.js';

export interface WorkersBench {
  /** The bench's hub, serving from one process; the section starts a second one with a worker per core on the same storage. */
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  points: number;
  fillBatch: number;
  seconds: number;
  turns: number;
  note(text: string): void;
  log(text: string): void;
}

type Run = Measured & { p50: number; p99: number; loadCpu: number; othersCpu: number };

const number = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (seconds: number, requests: number) => `${((seconds * 1000) / requests).toFixed(2)} ms`;
const cores = (run: Run) => (run.cpu.process / run.seconds).toFixed(2);

/**
 * One run of `amount` requests against a hub, with its CPU (every process of it), the benchmark's own, which is the
 * load generator's (autocannon shares the cores with the hub), and what the machine's other processes took meanwhile.
 */
async function run(hub: BenchHub, serverPid: number | undefined, figure: { figure: string; paths: string[] }, how: { amount: number } | { seconds: number }): Promise<Run> {
  const load = cpuWindow(ownCpuSeconds);
  const machine = cpuWindow(machineCpuSeconds);
  const measured = await overHttp(hub, serverPid, figure, how);
  const loadCpu = load().process;
  const othersCpu = machine().process - measured.cpu.process - (measured.cpu.database ?? 0) - loadCpu;
  return { ...measured, loadCpu, othersCpu };
}

/** The table rows of the section: each figure with all workers and with one process. */
export async function workerReads(bench: WorkersBench): Promise<string[][]> {
  const workers = availableParallelism();
  const created = await bench.client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench workers' }), { 'content-type': 'application/json' });
  const space = (JSON.parse(created.toString()) as { id: string }).id;
  bench.log(`workers: filling ${bench.points} points`);
  await fillSpatialPoints(bench.hub, bench.engine, space, bench.points, bench.fillBatch);
  await bench.engine.afterBulkLoad?.();
  const all = await startBenchHub({ dataDir: bench.hub.dataDir, env: { ...bench.engine.hubEnv(bench.hub.dataDir), HUB_WORKERS: String(workers) }, token: bench.hub.token });
  const base = `/hub/spaces/${space}`;
  const boxPath = ([west, south, east, north]: BBox) => `${base}/bbox?west=${west}&south=${south}&east=${east}&north=${north}`;
  const z14 = tiles(14);
  const figures = [
    { figure: 'Small bbox (about 100 features)', paths: boxes(sideFor(100, bench.points)).map(boxPath) },
    { figure: 'Web tiles z14 as GeoJSON', paths: z14.map((tile) => `${base}/tile/web/14_${tile.x}_${tile.y}`) },
    { figure: 'Web tiles z14 as MVT', paths: z14.map((tile) => `${base}/tile/web/14_${tile.x}_${tile.y}.mvt`) },
  ];
  const serverPid = bench.engine.serverPid?.();
  const database = serverPid === undefined ? [] : ['database CPU/req'];
  const rows = [['figure', `${workers} workers`, '1 process', 'workers/1', 'hub CPU/req', 'hub cores', ...database, 'load generator CPU/req', 'other processes (cores)', 'p50', 'p99']];
  try {
    for (const figure of figures) {
      bench.log(`workers: ${figure.figure}`);
      // A first run of each warms its caches and tells how many requests it answers in a turn's time.
      const amounts = await Promise.all([all, bench.hub].map(async (hub) => Math.max(2 * CONNECTIONS, Math.round(perSecond(await run(hub, serverPid, figure, { seconds: bench.seconds })) * bench.seconds))));
      const sides = [all, bench.hub].map((hub, at) => side(() => run(hub, serverPid, figure, { amount: amounts[at] })));
      await takeTurns(bench.turns, sides);
      const [many, one] = sides.map((each) => each.best());
      const both = (show: (each: Run) => string) => `${show(many)} / ${show(one)}`;
      rows.push([figure.figure, `${number(perSecond(many))} requests/s`, `${number(perSecond(one))} requests/s`,
        `${(perSecond(many) / perSecond(one)).toFixed(2)}×`, both((each) => ms(each.cpu.process, each.requests)), both(cores),
        ...database.map(() => both((each) => ms(each.cpu.database ?? 0, each.requests))),
        both((each) => ms(each.loadCpu, each.requests)), both((each) => (Math.max(0, each.othersCpu) / each.seconds).toFixed(2)), both((each) => `${each.p50} ms`), both((each) => `${each.p99} ms`)]);
    }
  } finally {
    await all.stop();
  }
  bench.note(`Workers: ${workers} workers against HUB_WORKERS=1 on the same ${bench.points} points and storage, ${CONNECTIONS} connections, ` +
    `best of ${bench.turns} turns each; "a / b" is all workers / one process. Hub CPU counts every process of the hub (primary and workers), ` +
    'cores is that CPU over the run\'s time; the load generator (autocannon, this process) runs on the same cores; "other processes" is ' +
    'the CPU the rest of the machine used during the run, which the hub could not have.');
  return rows;
}
