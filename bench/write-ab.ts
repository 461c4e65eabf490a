// Before/after bench of the write path: hubs built from two checkouts take turns at the same 10,000-feature PUTs (issue 23).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cityFeature, loadCities } from './data.js';
import { HubClient } from './http.js';
import { startBenchHub, type BenchHub } from './hub-server.js';
import { randomBytes } from 'node:crypto';
import { readCpuSeconds } from './process-cpu.js';
import { median } from './measure.js';
import { PROCESSORS } from './processors-ingest.js';

const FEATURES = 10_000;

/** A plain space, and a space with an activity log and both processors (schema and tagging rules). */
const KINDS = {
  plain: {},
  logged: { enableUUID: true, listeners: { 'activity-log': [{ params: {} }] }, processors: PROCESSORS },
} as const;
type Kind = keyof typeof KINDS;

/** The first PUT inserts every feature, the second changes every one (what the activity log diffs and chains). */
const PHASES = ['insert', 'update'] as const;
type Phase = typeof PHASES[number];

interface Side { name: string; hub: BenchHub; client: HubClient; dataDir: string }

function usage(): never {
  throw new Error('Usage: node dist/bench/write-ab.js --before <built checkout> [--turns 8] [--storage postgres://…] [--before-storage postgres://…]');
}

function options(argv: string[]): { before: string; turns: number; storage?: string; beforeStorage?: string } {
  let before: string | undefined;
  let turns = 8;
  let storage: string | undefined;
  let beforeStorage: string | undefined;
  for (let i = 0; i < argv.length; i += 2) {
    if (argv[i] === '--before') before = argv[i + 1];
    else if (argv[i] === '--turns') turns = Number(argv[i + 1]);
    else if (argv[i] === '--storage') storage = argv[i + 1];
    // A build from before a schema change cannot open a database the newer build migrated: give it its own.
    else if (argv[i] === '--before-storage') beforeStorage = argv[i + 1];
    else usage();
  }
  if (!before || !(turns > 0)) usage();
  return { before: resolve(before), turns, storage, beforeStorage };
}

/**
 * Hubs on one shared storage (PostgreSQL) share its admin token: a hub starting with another one revokes the first's.
 */
/** The module a checkout's `spatial-hub` command runs (the bundle since it was introduced, tsc's output before). */
function binOf(checkout: string): string {
  return (JSON.parse(readFileSync(join(checkout, 'package.json'), 'utf8')) as { bin: Record<string, string> }).bin['spatial-hub'];
}

async function start(name: string, main: string | undefined, storage: string | undefined, token: string): Promise<Side> {
  const dataDir = mkdtempSync(join(tmpdir(), `write-ab-${name}-`));
  const hub = await startBenchHub({ dataDir, main, env: storage ? { HUB_STORAGE: storage } : {}, token: storage ? token : undefined });
  return { name, hub, client: new HubClient(hub.origin, hub.token), dataDir };
}

/** One timed PUT: the hub process's CPU and the wall time, in milliseconds. */
async function put(side: Side, space: string, body: Buffer): Promise<{ cpu: number; wall: number }> {
  // A pause first, so that each PUT starts on a hub that has finished with the last one (its garbage, a checkpoint).
  await new Promise((resolve) => setTimeout(resolve, 200));
  const cpu = readCpuSeconds(side.hub.pid);
  const started = process.hrtime.bigint();
  const answer = await side.client.request('PUT', `/hub/spaces/${space}/features`, body, { accept: 'application/x-empty' });
  const wall = Number(process.hrtime.bigint() - started) / 1e6;
  if (answer.status !== 204) throw new Error(`${side.name}: PUT answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
  return { cpu: (readCpuSeconds(side.hub.pid) - cpu) * 1000, wall };
}

async function run(side: Side, kind: Kind, bodies: Record<Phase, Buffer>): Promise<Record<Phase, { cpu: number; wall: number }>> {
  const created = await side.client.request('POST', '/hub/spaces', JSON.stringify({ title: `write-ab ${kind}`, ...KINDS[kind] }), { 'content-type': 'application/json' });
  if (created.status !== 200) throw new Error(`${side.name}: space answered ${created.status}: ${created.body.toString()}`);
  const space = (JSON.parse(created.body.toString()) as { id: string }).id;
  const insert = await put(side, space, bodies.insert);
  const update = await put(side, space, bodies.update);
  if (kind === 'logged') {
    const count = await side.client.request('GET', `/hub/spaces/${space}-activity-log/count`);
    const logged = (JSON.parse(count.body.toString()) as { count: number }).count;
    if (logged !== 2 * FEATURES) throw new Error(`${side.name}: the log holds ${logged} of ${2 * FEATURES} states`);
  }
  await side.client.request('DELETE', `/hub/spaces/${space}`);
  return { insert, update };
}

async function main(): Promise<void> {
  const { before, turns, storage, beforeStorage } = options(process.argv.slice(2));
  const cities = loadCities(FEATURES);
  const features = cities.map(cityFeature);
  const bodies: Record<Phase, Buffer> = {
    insert: Buffer.from(JSON.stringify({ type: 'FeatureCollection', features })),
    update: Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: features.map((feature) =>
      ({ ...feature, properties: { ...feature.properties, population: Number(feature.properties.population) + 1 } })) })),
  };
  const token = `bench-${randomBytes(16).toString('hex')}`;
  const sides = [await start('before', join(before, binOf(before)), beforeStorage ?? storage, token), await start('after', undefined, storage, token)];
  const figures = new Map<string, Array<{ cpu: number; wall: number }>>();
  const record = (key: string, value: { cpu: number; wall: number }) => figures.set(key, [...(figures.get(key) ?? []), value]);
  try {
    // Two untimed turns warm up the JIT on both paths of both hubs.
    for (let turn = -2; turn < turns; turn++) {
      // The side and the kind that go first alternate, so that neither always follows the other's garbage.
      const order = turn % 2 === 0 ? sides : [...sides].reverse();
      const kinds: Kind[] = Math.floor(turn / 2) % 2 === 0 ? ['plain', 'logged'] : ['logged', 'plain'];
      for (const side of order) {
        for (const kind of kinds) {
          const result = await run(side, kind, bodies);
          if (turn < 0) continue;
          for (const phase of PHASES) record(`${kind} ${phase} ${side.name}`, result[phase]);
        }
      }
      console.error(`turn ${turn} done`);
    }
  } finally {
    for (const side of sides) {
      await side.hub.stop();
      rmSync(side.dataDir, { recursive: true, force: true });
    }
  }
  console.log(`10,000-feature PUTs, ${turns} turns each, medians (min-max); hub CPU and wall time per request in ms${storage ? ' (PostgreSQL)' : ' (SQLite)'}`);
  console.log('| space | PUT | before CPU | after CPU | CPU after/before | before wall | after wall |');
  console.log('|---|---|---|---|---|---|---|');
  for (const kind of Object.keys(KINDS) as Kind[]) {
    for (const phase of PHASES) {
      const [b, a] = ['before', 'after'].map((name) => figures.get(`${kind} ${phase} ${name}`) ?? []);
      const cell = (runs: Array<{ cpu: number; wall: number }>, key: 'cpu' | 'wall') => {
        const values = runs.map((run) => run[key]);
        return `${median(values).toFixed(0)} (${Math.min(...values).toFixed(0)}-${Math.max(...values).toFixed(0)})`;
      };
      const ratio = median(a.map((run) => run.cpu)) / median(b.map((run) => run.cpu));
      console.log(`| ${kind} | ${phase} | ${cell(b, 'cpu')} | ${cell(a, 'cpu')} | ${ratio.toFixed(2)} | ${cell(b, 'wall')} | ${cell(a, 'wall')} |`);
    }
  }
}

await main();
