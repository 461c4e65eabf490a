// Benchmark section `history`, its long histories (issue 23, part 4): changesets streamed over many versions, and pruning a million versions while writers go on.
import type { BenchEngine } from './engines.js';
import type { BenchHub } from './hub-server.js';
import { createSpace, type HubClient } from './http.js';
import { buildHistory, HISTORY_POOL, historyIndexed, historyRows } from './history-rows.js';

export interface HistoryScaleBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  /** Versions the changesets are streamed over (in one request, then a tenth of them). */
  changesetVersions: number;
  /** Old versions pruning removes while the writers write. */
  pruneVersions: number;
  /** Seconds the writers write before pruning starts. */
  writerSeconds: number;
  /** Runs `work` with the hub's RSS before, at its peak and after in the memory table. */
  withMemory<T>(figure: string, work: () => Promise<T>): Promise<T>;
  table(heading: string, lines: string[][]): void;
  log(text: string): void;
}

const WRITERS = 4;
/** A space keeping (practically) every version, until pruning is asked for. */
const KEEP_ALL = 100_000_000;
/** What the pruned space keeps. */
const KEEP_AFTER = 10;
/** Pruning longer than this fails the bench rather than hanging it. */
const PRUNE_TIMEOUT_MS = 20 * 60_000;

async function historySpace(bench: HistoryScaleBench, title: string, versions: number) {
  const id = await createSpace(bench.client, { title, versionsToKeep: KEEP_ALL });
  const spec = bench.engine.hubSpec(bench.hub.dataDir);
  const start = performance.now();
  const key = await buildHistory(spec, id, versions);
  // SQLite's writes above never left this thread for the event loop's poll phase, so the client has not yet seen the
  // hub close its idle keep-alive connections: a turn of the loop lets it drop them before they are reused (EPIPE).
  await new Promise((resolve) => setTimeout(resolve, 100));
  // A PATCH of versionsToKeep has the hub run its background pass over the space, which enters the states built beside it.
  await bench.client.expect(200, 'PATCH', `/hub/spaces/${id}`, JSON.stringify({ versionsToKeep: KEEP_ALL }), { 'content-type': 'application/json' });
  await historyIndexed(spec, key, PRUNE_TIMEOUT_MS);
  bench.log(`history: ${versions.toLocaleString('en-US')} versions built (and indexed by the hub) in ${((performance.now() - start) / 1000).toFixed(0)} s`);
  return { id, key, spec };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
};

/** GET of every changeset of a range in one request, read as it streams (only its tail is kept); seconds. */
async function streamChangesets(client: HubClient, space: string, last: number): Promise<number> {
  const start = performance.now();
  const tail = (await client.tail(`/hub/spaces/${space}/changesets?startVersion=0&endVersion=${last}&limit=100000`)).toString();
  if (!tail.includes(`"endVersion":${last}`)) throw new Error(`history: the changesets up to ${last} did not end with it: …${tail.slice(-200)}`);
  return (performance.now() - start) / 1000;
}

export async function historyScale(bench: HistoryScaleBench): Promise<void> {
  const versions = bench.changesetVersions;
  bench.log(`history: building ${versions.toLocaleString('en-US')} versions for the changesets`);
  const changesets = await historySpace(bench, 'bench history: changesets', versions);
  const lines: string[][] = [['read', 'versions', 'seconds', 'versions/s']];
  for (const count of [versions / 10, versions]) {
    const figure = `changesets of ${count.toLocaleString('en-US')} versions in one streamed answer`;
    const seconds = await bench.withMemory(figure, () => streamChangesets(bench.client, changesets.id, count - 1));
    lines.push([figure, count.toLocaleString('en-US'), seconds.toFixed(1), (count / seconds).toFixed(0)]);
  }
  bench.table('History: changesets streamed (memory: see the memory table, the two rows should match)', lines);

  bench.log(`history: building ${bench.pruneVersions.toLocaleString('en-US')} versions to prune`);
  const pruned = await historySpace(bench, 'bench history: pruning', bench.pruneVersions);
  const rowsBefore = await historyRows(pruned.spec, pruned.key);
  let phase: 'before' | 'during' | 'done' = 'before';
  const latencies = { before: [] as number[], during: [] as number[] };
  let write = 0;
  const writer = async () => {
    while (phase !== 'done') {
      const index = (write++ * 7919) % HISTORY_POOL;
      const body = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', id: `sp-${index}`, geometry: { type: 'Point', coordinates: [10, 50] }, properties: { write } }] });
      const start = performance.now();
      const at = phase;
      await bench.client.expect(204, 'PUT', `/hub/spaces/${pruned.id}/features`, body, { accept: 'application/x-empty' });
      latencies[at].push(performance.now() - start);
    }
  };
  const writers = Array.from({ length: WRITERS }, writer);
  await new Promise((resolve) => setTimeout(resolve, bench.writerSeconds * 1000));
  phase = 'during';
  const pruneStart = performance.now();
  await bench.client.expect(200, 'PATCH', `/hub/spaces/${pruned.id}`, JSON.stringify({ versionsToKeep: KEEP_AFTER }), { 'content-type': 'application/json' });
  let rowsLeft = rowsBefore;
  // Pruning is done when fewer rows are left than the writers' versions since could have made.
  while (rowsLeft > HISTORY_POOL) {
    if (performance.now() - pruneStart > PRUNE_TIMEOUT_MS) throw new Error(`history: pruning left ${rowsLeft} of ${rowsBefore} rows after ${PRUNE_TIMEOUT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    rowsLeft = await historyRows(pruned.spec, pruned.key);
  }
  const pruneSeconds = (performance.now() - pruneStart) / 1000;
  phase = 'done';
  await Promise.all(writers);
  const ms = (value: number) => value.toFixed(1);
  bench.table(`History: pruning ${bench.pruneVersions.toLocaleString('en-US')} old versions (${rowsBefore.toLocaleString('en-US')} history rows) ` +
    `in ${pruneSeconds.toFixed(0)} s while ${WRITERS} writers PUT one feature each into the same space`, [
    ['writers', 'PUTs', 'p50 ms', 'p99 ms', 'max ms'],
    ...(['before', 'during'] as const).map((at) => [at, String(latencies[at].length), ms(percentile(latencies[at], 0.5)), ms(percentile(latencies[at], 0.99)),
      ms(Math.max(...latencies[at]))]),
  ]);
}
