// Worker thread entry: times the read floors that FloorReads asks for, the storage floors on storages it opens once per spec.
import { parentPort, workerData } from 'node:worker_threads';
import type { Storage } from '../src/storage/storage.js';
import { openStorage, spaceKey, type StorageSpec } from './engines.js';
import type { FloorAnswer, FloorCalls, FloorRate, FloorRequest, FloorWorkerData } from './floor-reads.js';
import { drain, drainText, repeated, rotation } from './measure.js';
import type { CpuMeter, PlainFloor } from './plain-floor.js';
import { plainPostgres } from './plain-postgres.js';
import { plainSqlite } from './plain-sqlite.js';
import { cpuWindow, ownCpuSeconds } from './process-cpu.js';
import { warmPool } from './warm-pools.js';

const { serverPid } = workerData as FloorWorkerData;

/** The plain floors' CPU: this process's (the main thread waits meanwhile) and, on PostgreSQL, the server's. */
const meter: CpuMeter = () => cpuWindow(ownCpuSeconds, serverPid);

const plain = (spec: StorageSpec): PlainFloor => (spec.engine === 'postgres' ? plainPostgres : plainSqlite);

const storages = new Map<string, Promise<Storage>>();

function storage(spec: StorageSpec): Promise<Storage> {
  const key = JSON.stringify(spec);
  let opened = storages.get(key);
  if (!opened) {
    opened = openStorage(spec);
    storages.set(key, opened);
  }
  return opened;
}

/** Follows the handles through a space as a client iterating over HTTP does; returns the features seen. */
async function iterateOnce(store: Storage, spaceId: string, limit: number): Promise<number> {
  const key = await spaceKey(store, spaceId);
  let total = 0;
  let afterSeq = 0;
  for (;;) {
    const page = await drainText(store.features.queryText(key, { afterSeq, limit }));
    total += page.count;
    if (page.count < limit) return total;
    afterSeq = page.lastSeq;
  }
}

/** SQLite: the storage's own by-id read, a synchronous indexed lookup in this process. */
async function storageGetById(spec: StorageSpec, spaceId: string, ids: string[], seconds: number) {
  const store = await storage(spec);
  const key = await spaceKey(store, spaceId);
  const next = rotation(ids);
  let found = 0;
  const rate = await repeated(seconds, 1, async () => {
    found = 0;
    for (let i = 0; i < 1000; i++) found += (await drain(store.features.query(key, { ids: [next()], limit: 1 }))).count;
    if (found !== 1000) throw new Error('floor GET by id missed features');
    return found;
  });
  return { ...rate, count: found };
}

/**
 * PostgreSQL: one prepared SELECT by primary key through `pg`, with as many in flight as the HTTP run has
 * connections: the least a GET by id costs on this database.
 */
async function selectByKey(url: string, spaceId: string, ids: string[], seconds: number, concurrency: number) {
  const pool = await warmPool(url, concurrency);
  const { rows: [space] } = await pool.query<{ sid: string }>('SELECT sid FROM spaces WHERE id = $1', [spaceId]);
  const next = rotation(ids);
  const select = { name: 'floor_by_key', text: 'SELECT feature FROM features WHERE sid = $1 AND id = $2', rowMode: 'array' as const };
  let found = 0;
  const started = performance.now();
  const lane = async () => {
    while (performance.now() - started < seconds * 1000) {
      const { rows } = await pool.query({ ...select, values: [space.sid, next()] });
      found += rows.length;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { items: found, seconds: (performance.now() - started) / 1000, count: found };
}

/**
 * The spatial reads in turn, `concurrency` at a time, on storage: a box's features as the page texts the hub
 * sends (PostgreSQL joins them in SQL), or the tile the engine encodes (`ST_AsMVT`, or geojson-vt in process).
 */
async function spatialReads({ spec, spaceId, reads, seconds, concurrency }: FloorCalls['spatial']['args']): Promise<FloorRate> {
  const store = await storage(spec);
  const key = await spaceKey(store, spaceId);
  let next = 0;
  let items = 0;
  const started = performance.now();
  const lane = async () => {
    while (performance.now() - started < seconds * 1000) {
      const read = reads[next++ % reads.length];
      const query = { spatial: { kind: 'box' as const, box: read.box }, limit: read.limit };
      if (read.tile) await store.features.vectorTile(key, query, read.tile);
      else await drainText(store.features.queryText(key, query));
      items++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { items, seconds: (performance.now() - started) / 1000, count: items };
}

const floors: { [K in keyof FloorCalls]: (args: FloorCalls[K]['args']) => Promise<FloorCalls[K]['result']> } = {
  spatial: spatialReads,
  async getById({ spec, spaceId, ids, seconds, concurrency }) {
    return spec.engine === 'postgres' ? selectByKey(spec.url, spaceId, ids, seconds, concurrency) : storageGetById(spec, spaceId, ids, seconds);
  },
  async iterate({ spec, spaceId, limit, seconds, expected }) {
    const store = await storage(spec);
    const rate = await repeated(seconds, 1, async () => {
      const count = await iterateOnce(store, spaceId, limit);
      if (count !== expected) throw new Error(`floor iterate returned ${count} of ${expected} features`);
      return count;
    });
    return { ...rate, count: expected };
  },
  async search({ spec, spaceId, condition, limit, seconds }) {
    const store = await storage(spec);
    const key = await spaceKey(store, spaceId);
    let count = 0;
    const rate = await repeated(seconds, 2, async () => {
      count = (await drainText(store.features.queryText(key, { properties: [condition], limit }))).count;
      return count;
    });
    return { ...rate, count };
  },
  async listSpaces({ spec, filter, pageSize, seconds, expected }) {
    const store = await storage(spec);
    const rate = await repeated(seconds, 1, async () => {
      let count = 0;
      for await (const page of store.spaces.list(filter, pageSize)) count += page.length;
      if (count !== expected) throw new Error(`floor space list returned ${count} of ${expected} spaces`);
      return 1;
    });
    return { ...rate, count: expected };
  },
  plainGetById: (args) => plain(args.spec).getById(args, meter),
  plainIterate: (args) => plain(args.spec).iterate(args, meter),
  plainSearch: (args) => plain(args.spec).search(args, meter),
  plainSpatial: (args) => plain(args.spec).spatial(args, meter),
};

async function answer(request: FloorRequest): Promise<FloorAnswer> {
  try {
    // Each kind gets its own arguments; TypeScript cannot follow the pairing through the union.
    const floor = floors[request.kind] as (args: FloorRequest['args']) => Promise<unknown>;
    return { id: request.id, result: await floor(request.args) };
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.stack ?? error.message : String(error) };
  }
}

parentPort?.on('message', (request: FloorRequest) => {
  void answer(request).then((reply) => parentPort?.postMessage(reply));
});
