// The read floors, run in a worker thread: an isolate whose heap holds only the storage reads, as the hub's does.
import { Worker } from 'node:worker_threads';
import type { PropertyCondition } from '../src/core/feature-query.js';
import type { SpaceListFilter } from '../src/core/space-query.js';
import type { VectorTileRequest } from '../src/core/vector-tile-request.js';
import type { BBox } from '../src/geo/bbox.js';
import type { StorageSpec } from './engines.js';
import type { Rate } from './measure.js';

/** The reads the worker times, each on the storage that `spec` names. */
export interface FloorRequests {
  getById: { spec: StorageSpec; spaceId: string; ids: string[]; seconds: number; concurrency: number };
  iterate: { spec: StorageSpec; spaceId: string; limit: number; seconds: number; expected: number };
  search: { spec: StorageSpec; spaceId: string; condition: PropertyCondition; limit: number; seconds: number };
  listSpaces: { spec: StorageSpec; filter: SpaceListFilter; pageSize: number; seconds: number; expected: number };
  spatial: { spec: StorageSpec; spaceId: string; reads: SpatialFloorRead[]; seconds: number; concurrency: number; measure: 'reads' | 'bytes' };
}

/** One spatial read of the floor: the features of a box as page texts, or as a vector tile. */
export interface SpatialFloorRead {
  box: BBox;
  limit: number;
  tile?: VectorTileRequest;
}

export type FloorRequest = { [K in keyof FloorRequests]: { id: number; kind: K; args: FloorRequests[K] } }[keyof FloorRequests];

export interface FloorAnswer {
  id: number;
  /** The timed rate, and how many features the last run found. */
  rate?: Rate & { count: number };
  error?: string;
}

/**
 * The benchmark process holds the cities and the points it built, and a large heap makes V8 collect
 * less often: measured in that heap, the floors ran up to 40% faster than the same reads in a fresh
 * process. The hub is a fresh process, so the floors run in a fresh isolate too.
 */
export class FloorReads {
  private readonly worker = new Worker(new URL('./floor-worker.js', import.meta.url));
  private readonly waiting = new Map<number, { resolve: (rate: Rate & { count: number }) => void; reject: (error: Error) => void }>();
  private nextId = 1;

  constructor() {
    this.worker.on('message', (answer: FloorAnswer) => {
      const waiter = this.waiting.get(answer.id);
      this.waiting.delete(answer.id);
      if (answer.rate) waiter?.resolve(answer.rate);
      else waiter?.reject(new Error(answer.error ?? 'the floor worker answered nothing'));
    });
    this.worker.on('error', (error) => {
      for (const waiter of this.waiting.values()) waiter.reject(error);
      this.waiting.clear();
    });
  }

  run<K extends keyof FloorRequests>(kind: K, args: FloorRequests[K]): Promise<Rate & { count: number }> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, kind, args });
    });
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }
}
