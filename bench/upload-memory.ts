// Benchmark section `upload-memory`: the hub's RSS during one, then four concurrent, uploads of the largest body the defaults accept.
import { loadConfig } from '../src/config/config.js';
import { polygonFeature } from './data.js';
import type { HubClient } from './http.js';

/** Runs `work` while the benchmark samples the hub's memory under the name `figure`. */
export type MemoryProbe = <T>(figure: string, work: () => Promise<T>) => Promise<T>;

const OPEN = '{"type":"FeatureCollection","features":[';
const CLOSE = ']}';

/** The largest FeatureCollection of generated polygons that stays within `limit` bytes. */
function collectionUpTo(limit: number): { body: Buffer; features: number } {
  const parts: string[] = [];
  let size = OPEN.length + CLOSE.length;
  for (let i = 0; ; i++) {
    const text = JSON.stringify(polygonFeature(i));
    if (size + text.length + 1 > limit) break;
    parts.push(text);
    size += text.length + 1;
  }
  return { body: Buffer.from(OPEN + parts.join(',') + CLOSE), features: parts.length };
}

async function createSpace(client: HubClient): Promise<string> {
  const body = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title: 'bench upload memory' }), { 'content-type': 'application/json' });
  return (JSON.parse(body.toString()) as { id: string }).id;
}

/**
 * The defaults must let a node survive several maximum uploads at once (docs/decisions.md); this shows
 * what one and four of them cost. The hub runs with the default settings, so the body is as large as
 * a client may send it (or as HUB_MAX_BODY sets it for the run).
 */
export async function uploadMemory(client: HubClient, probe: MemoryProbe, log: (line: string) => void): Promise<string[]> {
  // The hub inherits the environment, so HUB_MAX_BODY (and HUB_MAX_IN_FLIGHT_BODY) set for the run apply to both.
  const maxBody = loadConfig([], process.env).maxBody;
  const { body, features } = collectionUpTo(maxBody);
  const megabytes = (body.length / 2 ** 20).toFixed(0);
  const put = async () => {
    const space = await createSpace(client);
    const started = performance.now();
    // With the answer clients get by default (no `Accept: application/x-empty`): the response texts cost memory too.
    await client.expect(200, 'PUT', `/hub/spaces/${space}/features`, body);
    return (performance.now() - started) / 1000;
  };
  log(`upload memory: one PUT of ${features} polygons (${megabytes} MiB, the default maximum body)`);
  const one = await probe(`1 PUT of ${megabytes} MiB (${features} features)`, put);
  log('upload memory: four such PUTs at once');
  const four = await probe(`4 concurrent PUTs of ${megabytes} MiB`, () => Promise.all([put(), put(), put(), put()]));
  return [
    `Maximum upload: ${features} polygons, ${megabytes} MiB, stored in ${one.toFixed(1)} s alone; ` +
    `four at once took ${four.map((seconds) => seconds.toFixed(1)).join(', ')} s.`,
  ];
}
