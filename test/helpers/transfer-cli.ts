// Runs `spatial-hub import|export` as a child process against a test hub, and compares features as GDAL gives them back.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { type HubProcess, MAIN } from './hub-process.js';


export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Starts the CLI with the hub's URL and token (in HUB_TOKEN, as users are told to pass it). */
export function startCli(hub: HubProcess, args: string[], options: { stdin?: 'pipe' | 'ignore'; url?: string; env?: Record<string, string> } = {}): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [MAIN, ...args, '--url', options.url ?? hub.url], {
    env: { ...process.env, HUB_TOKEN: hub.token, ...options.env }, stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => { stdout += chunk.toString(); });
  child.stderr?.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
  const done = new Promise<CliResult>((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return { child, done };
}

export const cli = (hub: HubProcess, args: string[], options: { url?: string; env?: Record<string, string> } = {}): Promise<CliResult> => startCli(hub, args, options).done;

export interface PlainFeature {
  id: string;
  geometry: { type: string; coordinates: unknown } | null;
  properties: Record<string, unknown>;
}

/** GDAL gives a string id back as a property `id` (FlatGeobuf, GeoPackage, CSV) or as the GeoJSON id: the same thing here. */
export function plainFeatures(collection: { features: Array<{ id?: unknown; geometry: PlainFeature['geometry']; properties: Record<string, unknown> | null }> }): Map<string, PlainFeature> {
  const byId = new Map<string, PlainFeature>();
  for (const feature of collection.features) {
    const properties = { ...(feature.properties ?? {}) };
    const id = String(feature.id ?? properties.id);
    delete properties.id;
    byId.set(id, { id, geometry: feature.geometry, properties });
  }
  return byId;
}

/**
 * A position as the hub stores it (docs/decisions.md: 3D, coordinates rounded to 8 decimals): a file that went through
 * the hub is compared with that, within 1e-9.
 */
function hubStored(position: number[]): number[] {
  const rounded = position.map((value) => Math.round(value * 1e8) / 1e8);
  return rounded.length === 2 ? [...rounded, 0] : rounded;
}

function sameCoordinates(actual: unknown, expected: unknown, path: string): void {
  if (Array.isArray(expected) && typeof expected[0] === 'number') expected = hubStored(expected as number[]);
  if (typeof expected === 'number') {
    assert.ok(typeof actual === 'number' && Math.abs(actual - expected) <= 1e-9, `${path}: ${String(actual)} is not ${expected} within 1e-9`);
    return;
  }
  assert.ok(Array.isArray(actual) && Array.isArray(expected) && actual.length === expected.length, `${path}: ${JSON.stringify(actual)} has not the shape of ${JSON.stringify(expected)}`);
  expected.forEach((item, i) => sameCoordinates((actual as unknown[])[i], item, `${path}[${i}]`));
}

/** Same ids, properties (as text when the format keeps only text) and geometries within 1e-9. */
export function assertSameFeatures(actual: Map<string, PlainFeature>, expected: Map<string, PlainFeature>, options: { textOnly?: boolean } = {}): void {
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort());
  for (const [id, want] of expected) {
    const got = actual.get(id) as PlainFeature;
    assert.deepEqual(Object.keys(got.properties).sort(), Object.keys(want.properties).sort(), `properties of ${id}`);
    for (const [key, value] of Object.entries(want.properties)) {
      const have = got.properties[key];
      if (options.textOnly && typeof value === 'number') assert.equal(Number(have), value, `${id}.${key}`);
      else assert.deepEqual(have, value, `${id}.${key}`);
    }
    assert.equal(got.geometry?.type, want.geometry?.type, `geometry type of ${id}`);
    sameCoordinates(got.geometry?.coordinates, want.geometry?.coordinates, `${id}.coordinates`);
  }
}
