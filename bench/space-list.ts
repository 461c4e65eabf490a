// Benchmark section `spaces`: GET /hub/spaces over 10,000 spaces, next to the same list read from storage, and the hub's RSS while it lists.
import { loadConfig } from '../src/config/config.js';
import type { SpaceListFilter } from '../src/core/space-query.js';
import { type BenchEngine, openStorage } from './engines.js';
import type { FloorReads } from './floor-reads.js';
import type { BenchHub } from './hub-server.js';
import type { HubClient } from './http.js';
import { type Rate, repeated } from './measure.js';

const SPACES = 10_000;
/** Every tenth space belongs to this owner: the owner filter's figure. */
const OTHER_OWNER = 'bench-other';
/** Creations in flight while filling (PostgreSQL overlaps them; SQLite runs them one after the other anyway). */
const FILL_LANES = 8;

export interface SpaceListBench {
  hub: BenchHub;
  client: HubClient;
  reads: FloorReads;
  engine: BenchEngine;
  turns: number;
  turnSeconds: number;
  alternate(turns: number, http: (turn: number) => Promise<Rate>, floor: () => Promise<Rate>): Promise<{ http: Rate; floor: Rate }>;
  withMemory<T>(figure: string, work: () => Promise<T>): Promise<T>;
  addRow(row: { figure: string; unit: string; http: Rate; floor: Rate; note?: string }): void;
  note(text: string): void;
}

/** The owner the hub gives the bench token's spaces. */
async function tokenOwner(client: HubClient): Promise<string> {
  const body = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'whose token' }), { 'content-type': 'application/json' });
  const space = JSON.parse(body.toString()) as { id: string; owner: string };
  await client.expect(204, 'DELETE', `/hub/spaces/${space.id}`);
  return space.owner;
}

/** Creates the spaces through a second storage connection, with the definition members the hub sets on creation. */
async function fill(bench: SpaceListBench, owner: string): Promise<void> {
  const side = await openStorage(bench.engine.hubSpec(bench.hub.dataDir));
  try {
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < SPACES; i = next++) {
        const now = Date.now();
        const spaceOwner = i % 10 === 9 ? OTHER_OWNER : owner;
        await side.spaces.create(`list-${i}`, {
          title: `bench space ${i}`, description: 'a space of the space list benchmark', owner: spaceOwner, cid: spaceOwner,
          storage: { id: bench.engine.name }, versionsToKeep: 1, createdAt: now, updatedAt: now,
        }, now);
      }
    };
    await Promise.all(Array.from({ length: FILL_LANES }, lane));
  } finally {
    await side.close();
  }
}

async function listCount(client: HubClient, query: string): Promise<number> {
  return (JSON.parse((await client.expect(200, 'GET', `/hub/spaces${query}`)).toString()) as unknown[]).length;
}

export async function spaceList(bench: SpaceListBench): Promise<void> {
  const owner = await tokenOwner(bench.client);
  const started = performance.now();
  await fill(bench, owner);
  bench.note(`Filled ${SPACES} spaces directly in ${((performance.now() - started) / 1000).toFixed(1)} s.`);
  // The SQLite fill never lets the event loop handle I/O: a keep-alive connection the hub closed meanwhile
  // (its idle timeout) must be noticed before the next request, or that request fails with EPIPE.
  await new Promise((resolve) => setTimeout(resolve, 200));
  const pageSize = loadConfig([], {}).spacePageSize;
  const spec = bench.engine.hubSpec(bench.hub.dataDir);
  // The filters the hub derives for the bench token, which holds every right (so no access condition).
  const lists: Array<{ query: string; filter: SpaceListFilter; expected: number }> = [
    { query: '?owner=*', filter: {}, expected: SPACES },
    { query: `?owner=${OTHER_OWNER}`, filter: { owner: { is: OTHER_OWNER } }, expected: SPACES / 10 },
  ];
  for (const [index, { query, filter, expected }] of lists.entries()) {
    const listed = await listCount(bench.client, query);
    if (listed !== expected) throw new Error(`GET /hub/spaces${query} listed ${listed} of ${expected} spaces`);
    const figure = `GET /hub/spaces${query} (${expected} of ${SPACES} spaces)`;
    const httpTurn = () => repeated(bench.turnSeconds, 1, async () => {
      await bench.client.tail(`/hub/spaces${query}`);
      return expected;
    });
    const { http, floor } = await bench.alternate(bench.turns,
      // The hub's memory is watched over the first turn of listing everything.
      (turn) => (turn === 0 && index === 0 ? bench.withMemory(figure, httpTurn) : httpTurn()),
      async () => {
        const rate = await bench.reads.run('listSpaces', { spec, filter, pageSize, seconds: bench.turnSeconds, expected });
        return { items: rate.items * expected, seconds: rate.seconds };
      });
    const latency = (rate: Rate) => `${((rate.seconds / rate.items) * expected * 1000).toFixed(1)} ms`;
    bench.addRow({ figure, unit: 'spaces/s', http, floor, note: `per list: HTTP ${latency(http)}, floor ${latency(floor)}; pages of ${pageSize}` });
  }
}
