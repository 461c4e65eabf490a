// Benchmark section `ogc`: OGC API Features items pages against iterate over the same 135,000-feature space, in the same run and with the same client.
import { cityParts, fillDirectly, loadCities } from './data.js';
import { type BenchEngine, openStorage, spaceKey } from './engines.js';
import type { BenchHub } from './hub-server.js';
import { countFeatures, handleOf, type HubClient, iterateHttp } from './http.js';
import { fastest, type Rate } from './measure.js';

/** The page size, for both walks. */
const PAGE = 1000;

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

const firstPage = (space: string) => `/ogc/collections/${space}/items?limit=${PAGE}`;
const iteratePath = (space: string, handle: string) => `/hub/spaces/${space}/iterate?limit=${PAGE}&handle=${handle}`;

/** Follows the `next` links to the end and counts the features of every page. */
async function itemsHttp(client: HubClient, space: string): Promise<number> {
  let total = 0;
  for (let path: string | undefined = firstPage(space); path !== undefined;) {
    const body = await client.expect(200, 'GET', path);
    total += countFeatures(body);
    path = nextPathOf(body.subarray(Math.max(0, body.length - 512)));
  }
  return total;
}

/** Where a walk is: the path of its next page, or undefined once it has ended; its time so far and its pages. */
interface Walk {
  next: string | undefined;
  seconds: number;
  pages: number;
}

/** One page of a walk, timed from request to the answer's last byte; reads only the tail, as the timed iterate does. */
async function step(client: HubClient, walk: Walk, nextOf: (tail: Buffer) => string | undefined): Promise<void> {
  if (walk.next === undefined) return;
  const start = performance.now();
  const tail = await client.tail(walk.next);
  walk.seconds += (performance.now() - start) / 1000;
  walk.pages++;
  walk.next = nextOf(tail);
}

/**
 * Both walks at once, a page of each in turn and the first of each pair alternating, so that both see the
 * machine (two shared cores) alike; each side's time is the sum of its own requests.
 */
async function walkBoth(client: HubClient, space: string, features: number): Promise<{ items: Rate; iterate: Rate }> {
  const items: Walk = { next: firstPage(space), seconds: 0, pages: 0 };
  const iterate: Walk = { next: iteratePath(space, '0'), seconds: 0, pages: 0 };
  const itemsStep = () => step(client, items, nextPathOf);
  const iterateStep = () => step(client, iterate, (tail) => {
    const handle = handleOf(tail);
    return handle === undefined ? undefined : iteratePath(space, handle);
  });
  for (let pair = 0; items.next !== undefined || iterate.next !== undefined; pair++) {
    if (pair % 2 === 0) {
      await itemsStep();
      await iterateStep();
    } else {
      await iterateStep();
      await itemsStep();
    }
  }
  if (items.pages !== iterate.pages) throw new Error(`OGC items took ${items.pages} pages and iterate ${iterate.pages}`);
  return { items: { items: features, seconds: items.seconds }, iterate: { items: features, seconds: iterate.seconds } };
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
  bench.log(`ogc: items and iterate, limit ${PAGE}, ${bench.turns} walks each, taking turns page by page`);
  const check = (walk: string, count: number) => {
    if (count !== bench.features) throw new Error(`${walk} returned ${count} of ${bench.features} features`);
  };
  check('iterate', await iterateHttp(bench.client, space, PAGE));
  check('OGC items', await itemsHttp(bench.client, space));

  const itemsRuns: Rate[] = [];
  const iterateRuns: Rate[] = [];
  for (let turn = 0; turn < bench.turns; turn++) {
    const walked = await walkBoth(bench.client, space, bench.features);
    itemsRuns.push(walked.items);
    iterateRuns.push(walked.iterate);
  }
  const ratios = itemsRuns.map((run, turn) => `${((100 * iterateRuns[turn].seconds) / run.seconds).toFixed(0)}%`);
  bench.note(`OGC items features/s against iterate's, walk by walk: ${ratios.join(', ')}.`);
  const quick = bench.features < 135_000 ? ' (--quick; 135,000 in a full run)' : '';
  bench.addRow({
    figure: `OGC items vs iterate (limit ${PAGE}, to the end)`, unit: 'features/s', http: fastest(itemsRuns), floor: fastest(iterateRuns), goal: bench.goal,
    note: `floor: iterate?limit=${PAGE} over HTTP, same space and client; ${bench.features.toLocaleString('en-US')} cities${quick}; ` +
      `the walks take turns page by page, best of ${bench.turns}`,
  });
}
