// The read floors, run in a worker thread: an isolate whose heap holds only the floor reads, as the hub's holds only its own work.
import { Worker } from 'node:worker_threads';
import type { PropertyCondition } from '../src/core/feature-query.js';
import type { SpaceListFilter } from '../src/core/space-query.js';
import type { VectorTileRequest } from '../src/geo/vector-tile-request.js';
import type { BBox } from '../src/geo/bbox.js';
import type { StorageSpec } from './engines.js';
import type { Rate } from './measure.js';
import type { PlainRate, PlainRequests } from './plain-floor.js';

/** A storage floor's timed rate, and how many features its last run found. */
export interface FloorRate extends Rate {
  count: number;
}

/**
 * The reads the worker times: the storage floors, each on the storage that `spec` names, and the plain floors
 * (plain-floor.ts) on their own tables.
 */
export interface FloorCalls {
  getById: { args: { spec: StorageSpec; spaceId: string; ids: string[]; seconds: number; concurrency: number }; result: FloorRate };
  iterate: { args: { spec: StorageSpec; spaceId: string; limit: number; seconds: number; expected: number }; result: FloorRate };
  search: { args: { spec: StorageSpec; spaceId: string; condition: PropertyCondition; limit: number; seconds: number }; result: FloorRate };
  listSpaces: { args: { spec: StorageSpec; filter: SpaceListFilter; pageSize: number; seconds: number; expected: number }; result: FloorRate };
  /** Counts requests; the large boxes' bytes are the hub's concern, not this floor's. */
  spatial: { args: { spec: StorageSpec; spaceId: string; reads: SpatialFloorRead[]; seconds: number; concurrency: number }; result: FloorRate };
  plainGetById: { args: PlainRequests['getById']; result: PlainRate };
  plainIterate: { args: PlainRequests['iterate']; result: PlainRate };
  plainSearch: { args: PlainRequests['search']; result: PlainRate };
  plainSpatial: { args: PlainRequests['spatial']; result: PlainRate };
}

/** What the worker is started with. */
export interface FloorWorkerData {
  /** The PostgreSQL postmaster whose processes' CPU the plain floors report; undefined on SQLite. */
  serverPid?: number;
}

/** One spatial read of the floor: the features of a box as page texts, or as a vector tile. */
export interface SpatialFloorRead {
  box: BBox;
  limit: number;
  tile?: VectorTileRequest;
}

export type FloorRequest = { [K in keyof FloorCalls]: { id: number; kind: K; args: FloorCalls[K]['args'] } }[keyof FloorCalls];

export interface FloorAnswer {
  id: number;
  /** The `result` of the call's kind in FloorCalls. */
  result?: unknown;
  error?: string;
}

/**
 * The benchmark process holds the cities and the points it built, and a large heap makes V8 collect
 * less often: measured in that heap, the floors ran up to 40% faster than the same reads in a fresh
 * process. The hub is a fresh process, so the floors run in a fresh isolate too.
 */
export class FloorReads {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, { resolve: (result: unknown) => void; reject: (error: Error) => void }>();
  private nextId = 1;

  constructor(workerData: FloorWorkerData) {
    this.worker = new Worker(new URL('./floor-worker.js', import.meta.url), { workerData });
    this.worker.on('message', (answer: FloorAnswer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (answer.result !== undefined) waiter?.resolve(answer.result);
      else waiter?.reject(new Error(answer.error ?? 'the floor worker answered nothing'));
    });
    this.worker.on('error', (error) => {
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    });
  }

  run<K extends keyof FloorCalls>(kind: K, args: FloorCalls[K]['args']): Promise<FloorCalls[K]['result']> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      // The worker answers each kind with that kind's result (floor-worker.ts).
      this.waiting.set(id, { resolve: (result) => resolve(result as FloorCalls[K]['result']), reject });
      this.worker.postMessage({ id, kind, args });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
