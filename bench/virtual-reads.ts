// Benchmark section `virtual`: a bbox on a group of two spaces against the same bbox on one space holding the features of both.
import { fillDirectly, regionBoxes, shiftedEast, SPATIAL_REGION, spatialPointParts } from './data.js';
import { type BenchEngine, openStorage, spaceKey } from './engines.js';
import type { BenchHub } from './hub-server.js';
import { countFeatures, createSpace, type HubClient } from './http.js';
import { fastest, type Rate } from './measure.js';

export interface VirtualBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  /** Features in each upstream; the single space holds twice as many. */
  perUpstream: number;
  fillBatch: number;
  /** Timed rounds; each round reads every box once through each space, taking turns. */
  turns: number;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; goal?: number; note?: string }): void;
  note(text: string): void;
  log(text: string): void;
}

/** The bound: the group answers within 1.5 times the single space's time (1 / 1.5, rounded up). */
const GOAL = 0.67;

/**
 * SQLite keeps one R*Tree for the features of every space, so the single space's points lie this many degrees east
 * of the upstreams' (and its boxes with them): otherwise each box would also meet the other spaces' candidates.
 */
const SINGLE_SHIFT = 20;

/** Reads each box once, timing each request to its last byte; checks the two spaces answer the same number of features. */
async function readBoxes(client: HubClient, space: string, queries: string[], limit: number): Promise<{ seconds: number; features: number }> {
  let seconds = 0;
  let features = 0;
  for (const query of queries) {
    const start = performance.now();
    const body = await client.expect(200, 'GET', `/hub/spaces/${space}/bbox?${query}&limit=${limit}`);
    seconds += (performance.now() - start) / 1000;
    features += countFeatures(body);
  }
  return { seconds, features };
}

export async function virtualReads(bench: VirtualBench): Promise<void> {
  const single = await createSpace(bench.client, { title: 'bench virtual: one space' });
  const a = await createSpace(bench.client, { title: 'bench virtual: upstream A' });
  const b = await createSpace(bench.client, { title: 'bench virtual: upstream B' });
  const n = bench.perUpstream;
  bench.log(`virtual: filling ${2 * n} points into one space and ${n} into each of two upstreams`);
  const side = await openStorage(bench.engine.hubSpec(bench.hub.dataDir));
  try {
    // The same points: the single space holds 0..2n-1, A the first half and B the second, so every box finds the same features.
    await fillDirectly(side, await spaceKey(side, single), 2 * n, bench.fillBatch, (i, now) => shiftedEast(spatialPointParts(i, single, now), SINGLE_SHIFT));
    await fillDirectly(side, await spaceKey(side, a), n, bench.fillBatch, (i, now) => spatialPointParts(i, a, now));
    await fillDirectly(side, await spaceKey(side, b), n, bench.fillBatch, (i, now) => spatialPointParts(n + i, b, now));
  } finally {
    await side.close();
  }
  await bench.engine.afterBulkLoad?.();
  const group = await createSpace(bench.client, { title: 'bench virtual: group', storage: { id: 'virtualspace', params: { virtualspace: { group: [a, b] } } } });

  bench.note(`virtual: the single space's points (and boxes) lie ${SINGLE_SHIFT}° east of the upstreams', so that on SQLite, whose R*Tree holds every space, no box meets the other spaces' entries.`);
  const density = (2 * n) / ((SPATIAL_REGION[2] - SPATIAL_REGION[0]) * (SPATIAL_REGION[3] - SPATIAL_REGION[1]));
  const sizes = [
    { name: 'small bbox (about 100 features)', side: Math.sqrt(100 / density), count: 200, limit: 1000 },
    { name: 'large bbox (about 10,000 features)', side: Math.sqrt(10_000 / density), count: 20, limit: 100_000 },
  ];
  for (const size of sizes) {
    const queries = regionBoxes(size.side, size.count, 0);
    const singleQueries = regionBoxes(size.side, size.count, SINGLE_SHIFT);
    const queriesOf = (space: string) => (space === single ? singleQueries : queries);
    // Warm-up, and the check that both answer alike.
    const [one, grouped] = [await readBoxes(bench.client, single, singleQueries, size.limit), await readBoxes(bench.client, group, queries, size.limit)];
    if (one.features !== grouped.features) throw new Error(`virtual: the group found ${grouped.features} features and the single space ${one.features}`);
    const groupRuns: Rate[] = [];
    const singleRuns: Rate[] = [];
    for (let turn = 0; turn < bench.turns; turn++) {
      const order = turn % 2 === 0 ? [group, single] : [single, group];
      for (const space of order) {
        const read = await readBoxes(bench.client, space, queriesOf(space), size.limit);
        (space === group ? groupRuns : singleRuns).push({ items: queries.length, seconds: read.seconds });
      }
    }
    bench.addRow({
      figure: `group of 2 × ${n.toLocaleString('en-US')} vs one space: ${size.name}`, unit: 'requests/s', http: fastest(groupRuns), floor: fastest(singleRuns), goal: GOAL,
      note: `floor: the same boxes on one space of ${(2 * n).toLocaleString('en-US')} features over HTTP (${Math.round(one.features / queries.length)} features per box); ` +
        `one request at a time, the two taking turns, best of ${bench.turns}; goal: within 1.5× the time`,
    });
  }
}
