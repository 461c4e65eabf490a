// Benchmark section `ogc`: OGC API Features items pages (GeoJSON and JSON-FG) against iterate over the same 135,000-feature space, in the same run and with the same client.
import { cityParts, fillDirectly, loadCities } from './data.js';
import { type BenchEngine, openStorage, spaceKey } from './engines.js';
import type { BenchHub } from './hub-server.js';
import { countFeatures, handleOf, type HubClient, iterateHttp } from './http.js';
import { type CpuSpent, fastest, type Rate } from './measure.js';
import { cpuWindow, readCpuSeconds } from './process-cpu.js';

/** The issue's page size, for every walk. */
const PAGE = 1000;

/** JSON-FG adds two members to each feature in the same scan: it should cost little beside the GeoJSON page (docs/jsonfg.md). */
const JSON_FG_GOAL = 0.9;

export interface OgcItemsBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  /** Features in the space: all 135,000 on a full run, fewer with `--quick`. */
  features: number;
  fillBatch: number;
  /** Timed walks per side (both walk at once, page by page); each side keeps its fastest walk. */
  turns: number;
  goal: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

/** The path of the `next` link at the end of an items page (links follow the features); undefined on the last page. */
function nextPathOf(tail: Buffer): string | undefined {
  const href = /\{"href":"([^"]+)","rel":"next"/.exec(tail.toString())?.[1];
  if (href === undefined) return undefined;
  const url = new URL(href);
  return url.pathname + url.search;
}

const firstPage = (space: string, format = '') => `/ogc/collections/${space}/items?limit=${PAGE}${format}`;
const iteratePath = (space: string, handle: string) => `/hub/spaces/${space}/iterate?limit=${PAGE}&handle=${handle}`;

/** Follows the `next` links to the end and counts the features of every page. */
async function itemsHttp(client: HubClient, space: string, format = ''): Promise<number> {
  let total = 0;
  for (let path: string | undefined = firstPage(space, format); path !== undefined;) {
    const body = await client.expect(200, 'GET', path);
    total += countFeatures(body);
    path = nextPathOf(body.subarray(Math.max(0, body.length - 512)));
  }
  return total;
}

/** Where a walk is: the path of its next page, or undefined once it has ended; its time and CPU so far and its pages. */
interface Walk {
  next: string | undefined;
  seconds: number;
  pages: number;
  cpu: { process: number; database: number };
  nextOf(tail: Buffer): string | undefined;
}

/** One page of a walk, timed from request to the answer's last byte; reads only the tail, as the timed iterate does. */
async function step(client: HubClient, walk: Walk, cpuOf: () => () => CpuSpent): Promise<void> {
  if (walk.next === undefined) return;
  const stop = cpuOf();
  const start = performance.now();
  const tail = await client.tail(walk.next);
  walk.seconds += (performance.now() - start) / 1000;
  const cpu = stop();
  walk.cpu.process += cpu.process;
  walk.cpu.database += cpu.database ?? 0;
  walk.pages++;
  walk.next = walk.nextOf(tail);
}

/** The three walks of one turn: OGC items as GeoJSON and as JSON-FG, and iterate. */
interface Walked {
  items: Walk;
  jsonFg: Walk;
  iterate: Walk;
}

/**
 * The walks at once, a page of each in turn and the first of each round rotating, so that all see the machine (two
 * shared cores) alike; each side's time and CPU is the sum of its own requests.
 */
async function walkAll(client: HubClient, space: string, cpuOf: () => () => CpuSpent): Promise<Walked> {
  const walk = (next: string, nextOf: (tail: Buffer) => string | undefined): Walk => ({ next, seconds: 0, pages: 0, cpu: { process: 0, database: 0 }, nextOf });
  const walked: Walked = {
    items: walk(firstPage(space), nextPathOf),
    jsonFg: walk(firstPage(space, '&f=jsonfg'), nextPathOf),
    iterate: walk(iteratePath(space, '0'), (tail) => {
      const handle = handleOf(tail);
      return handle === undefined ? undefined : iteratePath(space, handle);
    }),
  };
  const sides = [walked.items, walked.jsonFg, walked.iterate];
  for (let round = 0; sides.some((side) => side.next !== undefined); round++) {
    for (let at = 0; at < sides.length; at++) await step(client, sides[(round + at) % sides.length], cpuOf);
  }
  if (new Set(sides.map((side) => side.pages)).size !== 1) throw new Error(`the walks took ${sides.map((side) => side.pages).join(', ')} pages`);
  return walked;
}

async function fill(bench: OgcItemsBench, space: string): Promise<void> {
  const cities = loadCities(bench.features);
  if (cities.length < bench.features) throw new Error(`only ${cities.length} cities for ${bench.features} features`);
  const side = await openStorage(bench.engine.hubSpec(bench.hub.dataDir));
  try {
    const key = await spaceKey(side, space);
    const filled = await fillDirectly(side, key, bench.features, bench.fillBatch, (i, timestamp) => cityParts(cities[i], space, timestamp));
    bench.note(`OGC items: filled ${bench.features} cities directly in ${filled.seconds.toFixed(1)} s.`);
  } finally {
    await side.close();
  }
  await bench.engine.afterBulkLoad?.();
}

export async function ogcItems(bench: OgcItemsBench): Promise<void> {
  const created = await bench.client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench ogc items' }), { 'content-type': 'application/json' });
  const space = (JSON.parse(created.toString()) as { id: string }).id;
  bench.log(`ogc: filling ${bench.features} cities`);
  await fill(bench, space);

  // The counted walks check that both return every feature, and warm up both paths before anything is timed.
  bench.log(`ogc: items (GeoJSON, JSON-FG) and iterate, limit ${PAGE}, ${bench.turns} walks each, taking turns page by page`);
  const check = (walk: string, count: number) => {
    if (count !== bench.features) throw new Error(`${walk} returned ${count} of ${bench.features} features`);
  };
  check('iterate', await iterateHttp(bench.client, space, PAGE));
  check('OGC items', await itemsHttp(bench.client, space));
  check('OGC items in JSON-FG', await itemsHttp(bench.client, space, '&f=jsonfg'));

  const cpuOf = () => cpuWindow(() => readCpuSeconds(bench.hub.pid), bench.engine.serverPid?.());
  const runs: Walked[] = [];
  for (let turn = 0; turn < bench.turns; turn++) runs.push(await walkAll(bench.client, space, cpuOf));
  const rate = (walk: Walk): Rate => ({ items: bench.features, seconds: walk.seconds });
  const itemsRuns = runs.map((run) => rate(run.items));
  const jsonFgRuns = runs.map((run) => rate(run.jsonFg));
  const iterateRuns = runs.map((run) => rate(run.iterate));
  const percent = (part: Rate, whole: Rate) => `${((100 * whole.seconds) / part.seconds).toFixed(0)}%`;
  bench.note(`OGC items features/s against iterate's, walk by walk: ${itemsRuns.map((run, turn) => percent(run, iterateRuns[turn])).join(', ')}.`);
  bench.note(`OGC items in JSON-FG against GeoJSON items, walk by walk: ${jsonFgRuns.map((run, turn) => percent(run, itemsRuns[turn])).join(', ')}.`);
  const perPage = (walk: (run: Walked) => Walk) => {
    const pages = runs.reduce((sum, run) => sum + walk(run).pages, 0);
    const ms = (part: 'process' | 'database') => ((1000 * runs.reduce((sum, run) => sum + walk(run).cpu[part], 0)) / pages).toFixed(2);
    return `hub ${ms('process')} ms${bench.engine.serverPid ? `, database ${ms('database')} ms` : ''}`;
  };
  bench.note(`OGC CPU per ${PAGE}-feature page, all walks: GeoJSON items ${perPage((run) => run.items)}; JSON-FG items ${perPage((run) => run.jsonFg)}; iterate ${perPage((run) => run.iterate)}.`);
  const quick = bench.features < 135_000 ? ' (--quick; 135,000 in a full run)' : '';
  const walks = `${bench.features.toLocaleString('en-US')} cities${quick}; the walks take turns page by page, best of ${bench.turns}`;
  bench.addRow({
    figure: `OGC items vs iterate (limit ${PAGE}, to the end)`, unit: 'features/s', http: fastest(itemsRuns), floor: fastest(iterateRuns), goal: bench.goal,
    note: `floor: iterate?limit=${PAGE} over HTTP, same space and client; ${walks}`,
  });
  bench.addRow({
    figure: `OGC items f=jsonfg vs GeoJSON items (limit ${PAGE}, to the end)`, unit: 'features/s', http: fastest(jsonFgRuns), floor: fastest(itemsRuns), goal: JSON_FG_GOAL,
    note: `floor: the GeoJSON items walk, same space and client; ${walks}`,
  });
}
