// Bench section `bigspace`: /statistics of a 1,000,000-feature space, and how a delete of all of them by tag blocks other requests.
import { DEFAULT_STATISTICS_EXACT_LIMIT } from '../src/hub/features/statistics-service.js';
import { featureTexts } from '../src/hub/feature-text.js';
import type { FeatureWrite, SpaceKey, Storage } from '../src/storage/storage.js';
import { pointParts } from './data.js';
import { openStorage, spaceKey, type StorageSpec } from './engines.js';
import { HubClient } from './http.js';
import type { Rate } from './measure.js';

export interface BigSpaceFigures {
  /** One figure per statistics call: the HTTP request against the storage call (the floor). */
  statistics: { http: Rate; floor: Rate; httpMs: number[]; floorMs: number[]; estimated: string[] };
  delete: { features: number; seconds: number; probes: number; worstMs: number; p99Ms: number; failed: number };
}

export interface BigSpaceSettings {
  features: number;
  fillBatch: number;
  /** Statistics calls per side. */
  statisticsCalls: number;
  /** GET /hub is sent this often (ms) during the delete. */
  probeEvery: number;
}

const TAG = 'big';

/** Points spread over the world, each tagged `big` and one of four group tags, so the statistics have tags to count. */
function bigPoint(index: number, space: string, timestamp: number): FeatureWrite {
  const parts = pointParts(index, space, timestamp);
  parts.namespace.tags = [TAG, `group${index % 4}`];
  return featureTexts(parts).stored;
}

async function storeBatch(storage: Storage, space: SpaceKey, upserts: FeatureWrite[], timestamp: number): Promise<void> {
  await storage.features.write(space, upserts.map((row) => row.id), () => ({ plan: { upserts, deletes: [], timestamp }, result: undefined }));
}

const milliseconds = (start: number) => performance.now() - start;

/** GET /hub every `every` ms until `done()`; returns each answer's latency. A blocked event loop shows as one long latency. */
async function probe(client: HubClient, every: number, done: () => boolean): Promise<{ latencies: number[]; failed: number }> {
  const latencies: number[] = [];
  let failed = 0;
  while (!done()) {
    const start = performance.now();
    const response = await client.request('GET', '/hub');
    latencies.push(milliseconds(start));
    if (response.status !== 200) failed++;
    const wait = every - milliseconds(start);
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return { latencies, failed };
}

export async function bigSpace(origin: string, token: string, hubSpec: StorageSpec, settings: BigSpaceSettings,
  afterBulkLoad: () => Promise<void>, log: (message: string) => void): Promise<BigSpaceFigures> {
  const client = new HubClient(origin, token);
  const side = await openStorage(hubSpec);
  try {
    const created = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench big space' }), { 'content-type': 'application/json' });
    const space = (JSON.parse(created.toString()) as { id: string }).id;
    const key = await spaceKey(side, space);
    log(`bigspace: filling ${settings.features} tagged points through a second storage connection`);
    const timestamp = Date.now();
    for (let start = 0; start < settings.features; start += settings.fillBatch) {
      const upserts: FeatureWrite[] = [];
      for (let i = start; i < Math.min(start + settings.fillBatch, settings.features); i++) upserts.push(bigPoint(i, space, timestamp));
      await storeBatch(side, key, upserts, timestamp);
    }
    await afterBulkLoad();

    log(`bigspace: ${settings.statisticsCalls} statistics calls over HTTP and on storage`);
    const httpMs: number[] = [];
    const floorMs: number[] = [];
    let estimated: string[] = [];
    for (let call = 0; call < settings.statisticsCalls; call++) {
      let start = performance.now();
      const body = await client.expect(200, 'GET', `/hub/spaces/${space}/statistics`);
      httpMs.push(milliseconds(start));
      const stats = JSON.parse(body.toString()) as Record<string, { estimated?: boolean; value?: unknown }>;
      if ((stats.count.value as number) !== settings.features) throw new Error(`statistics count ${String(stats.count.value)} of ${settings.features}`);
      estimated = Object.entries(stats).filter(([, item]) => item?.estimated === true).map(([name]) => name);
      start = performance.now();
      await side.features.statistics(key, { exactUpTo: DEFAULT_STATISTICS_EXACT_LIMIT });
      floorMs.push(milliseconds(start));
    }
    const sum = (values: number[]) => values.reduce((total, value) => total + value, 0) / 1000;

    log(`bigspace: deleting ${settings.features} features by tag while GET /hub is sent every ${settings.probeEvery} ms`);
    const prober = new HubClient(origin, token);
    let deleting = true;
    const probes = probe(prober, settings.probeEvery, () => !deleting);
    const start = performance.now();
    await client.expect(204, 'DELETE', `/hub/spaces/${space}/features?tags=${TAG}`, undefined, { accept: 'application/x-empty' });
    const seconds = milliseconds(start) / 1000;
    deleting = false;
    const { latencies, failed } = await probes;
    prober.close();
    const left = await client.expect(200, 'GET', `/hub/spaces/${space}/count`);
    const count = (JSON.parse(left.toString()) as { count: number }).count;
    if (count !== 0) throw new Error(`${count} features left after the delete by tag`);
    const sorted = [...latencies].sort((a, b) => a - b);
    return {
      statistics: {
        http: { items: httpMs.length, seconds: sum(httpMs) }, floor: { items: floorMs.length, seconds: sum(floorMs) }, httpMs, floorMs, estimated,
      },
      delete: {
        features: settings.features, seconds, probes: latencies.length, failed,
        worstMs: sorted[sorted.length - 1] ?? 0, p99Ms: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0,
      },
    };
  } finally {
    client.close();
    await side.close();
  }
}
