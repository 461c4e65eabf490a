// Worker thread entry: times the read floors that FloorReads asks for, on storages it opens once per spec.
import { parentPort } from 'node:worker_threads';
import type { Storage } from '../src/storage/storage.js';
import { openStorage, type StorageSpec } from './engines.js';
import type { FloorAnswer, FloorRequest, FloorRequests } from './floor-reads.js';
import { drain, drainText, repeated, rotation } from './measure.js';

const storages = new Map<string, Storage>();

function storage(spec: StorageSpec): Storage {
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
  let total = 0;
  let afterSeq = 0;
  for (;;) {
    const page = await drainText(store.features.queryText({ spaceId, afterSeq, limit }));
    total += page.count;
    if (page.count < limit) return total;
    afterSeq = page.lastSeq;
  }
}

const floors: { [K in keyof FloorRequests]: (args: FloorRequests[K]) => Promise<{ items: number; seconds: number; count: number }> } = {
  async getById({ spec, spaceId, ids, seconds }) {
    const store = storage(spec);
    const next = rotation(ids);
    let found = 0;
    const rate = await repeated(seconds, 1, async () => {
      found = 0;
      for (let i = 0; i < 1000; i++) found += (await drain(store.features.query({ spaceId, ids: [next()], limit: 1 }))).count;
      if (found !== 1000) throw new Error('floor GET by id missed features');
      return found;
    });
    return { ...rate, count: found };
  },
  async iterate({ spec, spaceId, limit, seconds, expected }) {
    const store = storage(spec);
    const rate = await repeated(seconds, 1, async () => {
      const count = await iterateOnce(store, spaceId, limit);
      if (count !== expected) throw new Error(`floor iterate returned ${count} of ${expected} features`);
      return count;
    });
    return { ...rate, count: expected };
  },
  async search({ spec, spaceId, condition, limit, seconds }) {
    const store = storage(spec);
    let count = 0;
    const rate = await repeated(seconds, 2, async () => {
      count = (await drainText(store.features.queryText({ spaceId, properties: [condition], limit }))).count;
      return count;
    });
    return { ...rate, count };
  },
  async listSpaces({ spec, filter, pageSize, seconds, expected }) {
    const store = storage(spec);
    const rate = await repeated(seconds, 1, async () => {
      let count = 0;
      for await (const page of store.spaces.list(filter, pageSize)) count += page.length;
      if (count !== expected) throw new Error(`floor space list returned ${count} of ${expected} spaces`);
      return 1;
    });
    return { ...rate, count: expected };
  },
};

async function answer(request: FloorRequest): Promise<FloorAnswer> {
  try {
    // Each kind gets its own arguments; TypeScript cannot follow the pairing through the union.
    const floor = floors[request.kind] as (args: FloorRequest['args']) => ReturnType<(typeof floors)['iterate']>;
    return { id: request.id, rate: await floor(request.args) };
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.stack ?? error.message : String(error) };
  }
}

parentPort?.on('message', (request: FloorRequest) => {
  void answer(request).then((reply) => parentPort?.postMessage(reply));
});
