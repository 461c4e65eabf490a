// The plain floors (issue 22): what is read from the plain tables, what a timed run of them reports, and the loop that times it.
import type { BBox } from '../src/geo/bbox.js';
import type { StorageSpec } from './engines.js';
import type { CpuSpent, Measured } from './measure.js';

/** A plain floor's timed run: its rate, requests and CPU, the features of its last answer (or walk), and its answers' size. */
export interface PlainRate extends Measured {
  count: number;
  /** Characters of the answers' texts, bytes of tiles; the generated data is ASCII, so characters are bytes. */
  bytes: number;
  /** Each read's latency in ms, in the order the reads ended: at one lane, the order of the reads. */
  latenciesMs: number[];
}

export interface PlainTile {
  z: number;
  x: number;
  y: number;
  layer: string;
}

/** The features of a box as a FeatureCollection, or with `tile` the web tile of the same place as MVT. */
export interface PlainSpatialRead {
  box: BBox;
  limit: number;
  tile?: PlainTile;
}

/** The reads each engine's plain floor times, on the table `table` in the database `spec` names. */
export interface PlainRequests {
  getById: { spec: StorageSpec; table: string; ids: string[]; seconds: number; concurrency: number };
  /** Walks the whole table in pages of `limit` (keyset on the primary key), each walk checked to see `expected` features. */
  iterate: { spec: StorageSpec; table: string; limit: number; seconds: number; expected: number };
  /** The features whose numeric property `property` is above `above`. */
  search: { spec: StorageSpec; table: string; property: string; above: number; limit: number; seconds: number };
  spatial: { spec: StorageSpec; table: string; reads: PlainSpatialRead[]; seconds: number; concurrency: number };
}

/** Starts a CPU window over a floor's timed reads; the returned function ends it. */
export type CpuMeter = () => () => CpuSpent;

/** One engine's plain floor. */
export type PlainFloor = { [K in keyof PlainRequests]: (args: PlainRequests[K], meter: CpuMeter) => Promise<PlainRate> };

/** One answer of a plain read: its features and its size, and the requests it took when more than one (a walk of pages). */
export interface PlainAnswer {
  features: number;
  bytes: number;
  requests?: number;
}

/** Table names come from the benchmark itself; the check keeps them safe to put into SQL as they are. */
export function plainName(name: string): string {
  if (!/^[a-z_]+$/.test(name)) throw new Error(`bad plain table name ${name}`);
  return name;
}

/**
 * Runs `read` from `concurrency` lanes until `seconds` have passed, each lane at least once, inside one CPU window.
 * The rate counts requests or features, as the figure it is the floor of.
 */
export async function timedReads(options: { concurrency: number; seconds: number; meter: CpuMeter; counting: 'requests' | 'features' },
  read: () => Promise<PlainAnswer>): Promise<PlainRate> {
  let requests = 0;
  let features = 0;
  let bytes = 0;
  let count = 0;
  const latenciesMs: number[] = [];
  const stop = options.meter();
  const started = performance.now();
  const lane = async () => {
    do {
      const began = performance.now();
      const answer = await read();
      latenciesMs.push(performance.now() - began);
      requests += answer.requests ?? 1;
      features += answer.features;
      bytes += answer.bytes;
      count = answer.features;
    } while (performance.now() - started < options.seconds * 1000);
  };
  await Promise.all(Array.from({ length: options.concurrency }, lane));
  const seconds = (performance.now() - started) / 1000;
  const cpu = stop();
  return { items: options.counting === 'requests' ? requests : features, seconds, requests, cpu, count, bytes, latenciesMs };
}

/**
 * One walk through a table in pages of `limit`, checked to see `expected` features: `fetch` reads the page after a
 * key (the first page after `start`), and the walk ends with the first page that is not full.
 */
export function pageWalk<K>(start: K, limit: number, expected: number,
  fetch: (after: K) => Promise<PlainAnswer & { last: K }>): () => Promise<PlainAnswer> {
  return async () => {
    const walked = { features: 0, bytes: 0, requests: 0 };
    let after = start;
    for (;;) {
      const page = await fetch(after);
      walked.features += page.features;
      walked.bytes += page.bytes;
      walked.requests++;
      after = page.last;
      if (page.features < limit) break;
    }
    if (walked.features !== expected) throw new Error(`plain floor iterate walked ${walked.features} of ${expected} features`);
    return walked;
  };
}
