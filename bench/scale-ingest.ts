// The scale section's load: FeatureCollections PUT over HTTP a few at a time, timed step by step (each million), with the hub's CPU, RSS and disk size at each step.
import type { HubClient } from './http.js';
import { readMemory } from './hub-server.js';
import { readCpuSeconds } from './process-cpu.js';

/** One step of the load: the features written in it, how long they took, what they cost, and the state at its end. */
export interface IngestStep {
  /** Features in the space at the end of the step. */
  total: number;
  features: number;
  seconds: number;
  hubCpu: number;
  /** CPU seconds of the PostgreSQL server; undefined on SQLite, which works inside the hub. */
  databaseCpu?: number;
  rssKiB: number;
  diskBytes: number;
}

export interface HttpIngest {
  client: HubClient;
  /** The space's features path. */
  path: string;
  count: number;
  batch: number;
  inFlight: number;
  step: number;
  /** The request body of features [start, end). */
  body(start: number, end: number): Buffer;
  hubPid: number;
  serverPid?: number;
  diskBytes(): Promise<number>;
  onStep(step: IngestStep): void;
}

/**
 * Sends the batches in order with `inFlight` requests outstanding, as a bulk loader keeps the server busy between
 * answers. A step ends when the answers have covered its features; with requests in flight its end is off by at most
 * `inFlight - 1` batches, which the next step gets back.
 */
export async function ingestOverHttp(load: HttpIngest): Promise<IngestStep[]> {
  const steps: IngestStep[] = [];
  const cpu = () => ({ hub: readCpuSeconds(load.hubPid), database: load.serverPid === undefined ? undefined : readCpuSeconds(load.serverPid) });
  let mark = { at: performance.now(), total: 0, cpu: cpu() };
  let nextStart = 0;
  let written = 0;
  const endStep = async () => {
    const now = { at: performance.now(), total: written, cpu: cpu() };
    const step: IngestStep = {
      total: now.total, features: now.total - mark.total, seconds: (now.at - mark.at) / 1000, hubCpu: now.cpu.hub - mark.cpu.hub,
      ...(now.cpu.database === undefined || mark.cpu.database === undefined ? {} : { databaseCpu: now.cpu.database - mark.cpu.database }),
      rssKiB: readMemory(load.hubPid).rssKiB, diskBytes: 0,
    };
    mark = now;
    step.diskBytes = await load.diskBytes();
    steps.push(step);
    load.onStep(step);
  };
  const lane = async () => {
    while (nextStart < load.count) {
      const start = nextStart;
      const end = Math.min(start + load.batch, load.count);
      nextStart = end;
      await load.client.expect(204, 'PUT', load.path, load.body(start, end), { accept: 'application/x-empty' });
      written += end - start;
      if (written - mark.total >= load.step || (written === load.count && written > mark.total)) await endStep();
    }
  };
  await Promise.all(Array.from({ length: load.inFlight }, lane));
  return steps;
}
