// Benchmark section `history` (issue 23, part 4): what keeping versions costs writes and HEAD reads, and what reading back in time costs.
import { fillDirectly, regionBoxes, shiftedEast, SPATIAL_REGION, spatialPointParts } from './data.js';
import { type BenchEngine, openStorage, spaceKey } from './engines.js';
import type { BenchHub } from './hub-server.js';
import { countFeatures, createSpace, type HubClient } from './http.js';
import { cpuWindow, readCpuSeconds } from './process-cpu.js';
import { type CpuSpent, fastest, median, perSecond, type Rate } from './measure.js';

export interface HistoryBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  /** Points in each of the two spaces before the timed writes. */
  points: number;
  fillBatch: number;
  /** Timed 1,000-feature PUTs into each space; each is one version of the versioned space. */
  writes: number;
  /** Rounds of the read figures, the two sides taking turns. */
  turns: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

/** The versioned space keeps 1,000 versions. */
const VERSIONS_TO_KEEP = 1000;
const FEATURES_PER_WRITE = 1000;
/** The read at a version goes this many writes back. */
const VERSIONS_BACK = 100;
/** The second PUT figure rewrites features of this many, all of them rewritten before: the pages an edited area's writes touch are few and hot. */
const WORKING_SET = 20_000;
/** Goals of issue 23 part 4: a versioned PUT at 70% of a plain one, a bbox 100 versions back at 50% of HEAD's. */
const PUT_GOAL = 0.7;
const BACK_GOAL = 0.5;
/** HEAD reads must not notice history: "within noise". */
const HEAD_GOAL = 0.9;
/**
 * SQLite keeps one R*Tree for every space, so the plain space's points lie this many degrees east of the versioned
 * space's (and its boxes with them): otherwise each box would also meet the other space's candidates.
 */
const PLAIN_SHIFT = 20;

interface Space {
  id: string;
  shift: number;
}

interface TimedWork extends Rate {
  cpu: CpuSpent;
  /** Features the reads returned, to check two sides answer alike. */
  features: number;
}

const ms = (seconds: number) => `${(seconds * 1000).toFixed(1)} ms`;

export async function historyCosts(bench: HistoryBench): Promise<void> {
  const { client, engine } = bench;
  const versioned: Space = { id: await createSpace(client, { title: 'bench history: versioned', versionsToKeep: VERSIONS_TO_KEEP }), shift: 0 };
  const plain: Space = { id: await createSpace(client, { title: 'bench history: plain' }), shift: PLAIN_SHIFT };
  bench.log(`history: filling ${bench.points} points into a space keeping ${VERSIONS_TO_KEEP} versions and into a plain one`);
  const side = await openStorage(engine.hubSpec(bench.hub.dataDir));
  try {
    for (const space of [versioned, plain]) {
      await fillDirectly(side, await spaceKey(side, space.id), bench.points, bench.fillBatch, (i, now) => shiftedEast(spatialPointParts(i, space.id, now), space.shift));
    }
  } finally {
    await side.close();
  }
  await engine.afterBulkLoad?.();

  const cpuOf = () => cpuWindow(() => readCpuSeconds(bench.hub.pid), engine.serverPid?.());
  /** Write `write` rewrites 1,000 points of the first `range` (a stride through the ids), each with a new property value. */
  const body = (space: Space, write: number, range: number) => {
    const now = Date.now();
    const features = Array.from({ length: FEATURES_PER_WRITE }, (_, k) => {
      const parts = shiftedEast(spatialPointParts((write * 7919 + k * 104729) % range, space.id, now), space.shift);
      return { type: 'Feature', id: parts.id, geometry: parts.geometry, properties: { ...parts.properties, revision: write } };
    });
    return JSON.stringify({ type: 'FeatureCollection', features });
  };
  /** `writes` PUTs into each space, taking turns, after `warmUp` untimed ones: the median time and CPU of each side. */
  const timedPuts = async (range: number, writes: number, warmUp: number) => {
    const puts = new Map<Space, Array<{ seconds: number; cpu: CpuSpent }>>([[versioned, []], [plain, []]]);
    for (let write = 0; write < warmUp + writes; write++) {
      for (const space of write % 2 === 0 ? [versioned, plain] : [plain, versioned]) {
        const text = body(space, write, range);
        const stop = cpuOf();
        const start = performance.now();
        await client.expect(204, 'PUT', `/hub/spaces/${space.id}/features`, text, { accept: 'application/x-empty' });
        if (write >= warmUp) puts.get(space)?.push({ seconds: (performance.now() - start) / 1000, cpu: stop() });
      }
    }
    const rate = (space: Space): Rate => ({ items: FEATURES_PER_WRITE, seconds: median((puts.get(space) ?? []).map((put) => put.seconds)) });
    const cpu = (space: Space, part: keyof CpuSpent) => ms(median((puts.get(space) ?? []).map((put) => put.cpu[part] ?? 0)));
    return {
      versioned: rate(versioned), plain: rate(plain),
      cpu: `hub ${cpu(versioned, 'process')} / ${cpu(plain, 'process')}` + (engine.serverPid ? `, database ${cpu(versioned, 'database')} / ${cpu(plain, 'database')}` : ''),
    };
  };

  bench.log(`history: ${bench.writes} PUTs of ${FEATURES_PER_WRITE} features into each, taking turns`);
  const spread = await timedPuts(bench.points, bench.writes, 0);
  bench.addRow({
    figure: `PUT ${FEATURES_PER_WRITE.toLocaleString('en-US')} changed features, versionsToKeep ${VERSIONS_TO_KEEP}`, unit: 'features/s',
    http: spread.versioned, floor: spread.plain, goal: PUT_GOAL,
    note: `floor: the same PUT into a plain space; ${bench.writes} each, taking turns, median; each rewrites ${FEATURES_PER_WRITE} of ${bench.points.toLocaleString('en-US')} points`,
  });
  bench.note(`History: CPU per ${FEATURES_PER_WRITE}-feature PUT (median), versioned / plain: ${spread.cpu}.`);

  const density = bench.points / ((SPATIAL_REGION[2] - SPATIAL_REGION[0]) * (SPATIAL_REGION[3] - SPATIAL_REGION[1]));
  const small = Math.sqrt(100 / density);
  const readBoxes = async (space: Space, extra: string): Promise<TimedWork> => {
    const queries = regionBoxes(small, 200, space.shift);
    const stop = cpuOf();
    const start = performance.now();
    let features = 0;
    for (const query of queries) features += countFeatures(await client.expect(200, 'GET', `/hub/spaces/${space.id}/bbox?${query}${extra}`));
    return { items: queries.length, seconds: (performance.now() - start) / 1000, cpu: stop(), features };
  };
  const ids = Array.from({ length: 500 }, (_, i) => `sp-${(i * 7919) % bench.points}`);
  const readIds = async (space: Space): Promise<TimedWork> => {
    const stop = cpuOf();
    const start = performance.now();
    for (const id of ids) await client.expect(200, 'GET', `/hub/spaces/${space.id}/features/${id}`);
    return { items: ids.length, seconds: (performance.now() - start) / 1000, cpu: stop(), features: ids.length };
  };
  const head = await readHead(bench, client, versioned.id);
  const back = `&version=${head - VERSIONS_BACK}`;
  const figures: Array<{ name: string; goal: number; floorName: string; sides: [() => Promise<TimedWork>, () => Promise<TimedWork>] }> = [
    { name: 'small bbox (about 100 features), HEAD of a space with history', goal: HEAD_GOAL, floorName: 'the same boxes on the plain space',
      sides: [() => readBoxes(versioned, ''), () => readBoxes(plain, '')] },
    { name: 'GET by id, HEAD of a space with history', goal: HEAD_GOAL, floorName: 'the same ids in the plain space',
      sides: [() => readIds(versioned), () => readIds(plain)] },
    { name: `small bbox ${VERSIONS_BACK} versions back`, goal: BACK_GOAL, floorName: 'the same boxes at HEAD of the same space',
      sides: [() => readBoxes(versioned, back), () => readBoxes(versioned, '')] },
  ];
  for (const figure of figures) {
    bench.log(`history: ${figure.name}`);
    // Warm-up, and the check that both sides find as many features (every write moved none, so every version holds the same places).
    const [first, second] = [await figure.sides[0](), await figure.sides[1]()];
    if (first.features !== second.features) throw new Error(`history: ${figure.name} found ${first.features} features, its floor ${second.features}`);
    const runs: [TimedWork[], TimedWork[]] = [[], []];
    for (let turn = 0; turn < bench.turns; turn++) {
      for (const which of turn % 2 === 0 ? [0, 1] : [1, 0]) runs[which].push(await figure.sides[which]());
    }
    const [http, floor] = [fastest(runs[0]), fastest(runs[1])];
    const perRequest = (run: TimedWork, part: keyof CpuSpent) => ms((run.cpu[part] ?? 0) / run.items);
    bench.addRow({
      figure: `history: ${figure.name}`, unit: 'requests/s', http, floor, goal: figure.goal,
      note: `floor: ${figure.floorName}; one request at a time, taking turns, best of ${bench.turns}; CPU per request hub ${perRequest(http, 'process')} / ${perRequest(floor, 'process')}` +
        (engine.serverPid ? `, database ${perRequest(http, 'database')} / ${perRequest(floor, 'database')}` : '') +
        ` (${perSecond(http).toFixed(0)} / ${perSecond(floor).toFixed(0)} requests/s)`,
    });
  }

  // After the reads, which go back from the HEAD the writes above left. Every feature of the working set has been
  // rewritten before the timed writes, so each of them replaces versioned states, as an edited area's writes do.
  const range = Math.min(WORKING_SET, bench.points);
  const warmUp = Math.ceil(range / FEATURES_PER_WRITE);
  bench.log(`history: ${bench.writes} PUTs of ${FEATURES_PER_WRITE} features of a working set of ${range} into each, after ${warmUp} untimed`);
  const working = await timedPuts(range, bench.writes, warmUp);
  bench.addRow({
    figure: `PUT ${FEATURES_PER_WRITE.toLocaleString('en-US')} features of a ${range.toLocaleString('en-US')}-feature working set, versionsToKeep ${VERSIONS_TO_KEEP}`,
    unit: 'features/s', http: working.versioned, floor: working.plain,
    note: `floor: the same PUT into a plain space; each feature rewritten before; ${bench.writes} each, taking turns, median; CPU per PUT ${working.cpu}`,
  });
}

/** HEAD of a space, as the 400 for a version past it names it (the statistics do not carry it yet). */
async function readHead(bench: HistoryBench, client: HubClient, space: string): Promise<number> {
  const response = await client.request('GET', `/hub/spaces/${space}/search?version=999999999&limit=1`);
  const match = /HEAD is (-?\d+)/.exec(response.body.toString());
  if (response.status !== 400 || !match) throw new Error(`history: could not read HEAD of ${space}: ${response.status} ${response.body.toString().slice(0, 300)}`);
  bench.log(`history: HEAD of the versioned space is ${match[1]}`);
  return Number(match[1]);
}
