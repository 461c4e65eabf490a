// Reads GET /metrics of a test hub (Prometheus text) and the value of one sample in it.
import assert from 'node:assert/strict';
import type { HubProcess } from './hub-process.js';
import { request, textOf } from './http-request.js';

/** The value of one sample of Prometheus text: the metric `name` with exactly these labels (in any order). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((pair) => [pair[1], pair[2]]));
    if (Object.keys(found).length !== Object.keys(labels).length) continue;
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) return Number(match[3]);
  }
  return undefined;
}

/** GET /metrics from loopback, which the default HUB_METRICS lets read; asserts it answers. */
export async function metrics(hub: HubProcess, headers: Record<string, string> = {}): Promise<string> {
  const response = await request(`${hub.url}/metrics`, 'GET', headers);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return textOf(response.body);
}
