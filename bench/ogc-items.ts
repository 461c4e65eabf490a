// Benchmark section `ogc`: OGC API Features items pages against iterate over the same 135,000-feature space, in the same run and with the same client.
import { cityParts, fillDirectly, loadCities } from './data.js';
import { type BenchEngine, openStorage, spaceKey } from './engines.js';
import type { BenchHub } from './hub-server.js';
import { countFeatures, type HubClient, iterateHttp, iterateHttpTimed } from './http.js';
import { fastest, type Rate, timed } from './measure.js';

/** The page size, for both walks. */
const PAGE = 1000;

export interface OgcItemsBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  /** Features in the space: all 135,000 on a full run, fewer with `--quick`. */
  features: number;
  fillBatch: number;
  /** Timed walks per side; the sides take turns and each keeps its fastest walk. */
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

/** The timed walk: follows the `next` links reading only each answer's tail, as the timed iterate does. */
async function itemsHttpTimed(client: HubClient, space: string): Promise<void> {
  for (let path: string | undefined = firstPage(space); path !== undefined;) path = nextPathOf(await client.tail(path));
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
  bench.log(`ogc: items and iterate, limit ${PAGE}, ${bench.turns} turns each`);
  const check = (walk: string, count: number) => {
    if (count !== bench.features) throw new Error(`${walk} returned ${count} of ${bench.features} features`);
  };
  check('iterate', await iterateHttp(bench.client, space, PAGE));
  check('OGC items', await itemsHttp(bench.client, space));

  const items = () => timed(async () => {
    await itemsHttpTimed(bench.client, space);
    return bench.features;
  });
  const iterate = () => timed(async () => {
    await iterateHttpTimed(bench.client, space, PAGE);
    return bench.features;
  });
  // Who goes first changes every turn, so that neither side always follows the other's garbage.
  const itemsRuns: Rate[] = [];
  const iterateRuns: Rate[] = [];
  for (let turn = 0; turn < bench.turns; turn++) {
    if (turn % 2 === 0) {
      itemsRuns.push(await items());
      iterateRuns.push(await iterate());
    } else {
      iterateRuns.push(await iterate());
      itemsRuns.push(await items());
    }
  }
  const quick = bench.features < 135_000 ? ` (--quick: ${bench.features.toLocaleString('en-US')} instead of 135,000)` : '';
  bench.addRow({
    figure: `OGC items vs iterate (limit ${PAGE}, to the end)`, unit: 'features/s', http: fastest(itemsRuns), floor: fastest(iterateRuns), goal: bench.goal,
    note: `floor: GET /hub/spaces/{id}/iterate?limit=${PAGE} on the same space, same client, over HTTP; ` +
      `${bench.features.toLocaleString('en-US')} cities${quick}; best of ${bench.turns} alternating walks each`,
  });
}
