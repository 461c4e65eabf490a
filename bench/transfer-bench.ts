// Bench section `transfer` (issue 25, section 3): `spatial-hub import` of N points from GeoJSONSeq next to its floor, exports next to iterate, and an interrupted import resumed.
import { spawn } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { featureTexts } from '../src/hub/feature-text.js';
import type { FeatureParts } from '../src/hub/feature-text.js';
import { put } from '../src/transfer/formats/output-stream.js';
import { scatteredPlace } from './data.js';
import type { BenchEngine, StorageSpec } from './engines.js';
import { type BenchHub, readMemory } from './hub-server.js';
import { type HubClient, iterateHttpTimed } from './http.js';
import { hubTableIngest } from './hub-table-ingest.js';
import { describeImportMemory, watchImportMemory } from './import-memory.js';
import { featuresMaintenance, type Maintenance, settleFeatures } from './postgres-maintenance.js';
import { plainIngest } from './plain-ingest.js';
import { readCpuSeconds } from './process-cpu.js';
import { MAIN } from '../test/helpers/hub-process.js';

/** Features per request of the CLI (its default) and per batch of the floor. */
const CHUNK = 5000;
/** Requests the CLI keeps in flight (its default), and the floor's connections on PostgreSQL. */
const PARALLEL = 4;
const PLAIN_TABLE = 'plain_transfer';
/** The issue's goals (section 3). */
const GOALS = { importVsFloor: 0.5, exportVsIterate: 0.8, resumedVsWhole: 1.1 };

export interface TransferBench {
  hub: BenchHub;
  client: HubClient;
  engine: BenchEngine;
  plainSpec: StorageSpec;
  /** The hub's own storage, for the floor that loads the hub's rows into a copy of its table (PostgreSQL). */
  hubSpec: StorageSpec;
  /** Points to import. */
  features: number;
  /** A directory for the input and output files. */
  dir: string;
  table(heading: string, lines: string[][]): void;
  log(text: string): void;
}

const number = (value: number) => Math.round(value).toLocaleString('en-US');
/** CPU seconds of this process's children that ended (the CLI once reaped): fields 16-17 (cutime, cstime) of /proc/self/stat, in 1/100 s. */
function endedChildrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

interface ImportCpu {
  cli: number;
  hub: number;
  /** The PostgreSQL server's processes; 0 for SQLite, which works inside the hub. */
  database: number;
}

/** Starts counting the CPU seconds of the CLI runs (once reaped), the hub and the database server; the returned function reads what they used since. */
function cpuMeter(hubPid: number, serverPid?: number): () => ImportCpu {
  const database = () => (serverPid === undefined ? 0 : readCpuSeconds(serverPid));
  const before = { cli: endedChildrenCpuSeconds(), hub: readCpuSeconds(hubPid), database: database() };
  return () => ({ cli: endedChildrenCpuSeconds() - before.cli, hub: readCpuSeconds(hubPid) - before.hub, database: database() - before.database });
}

const cpuSum = (cpu: ImportCpu) => cpu.cli + cpu.hub + cpu.database;
const cpuParts = (cpu: ImportCpu) => `CLI ${cpu.cli.toFixed(1)} + hub ${cpu.hub.toFixed(1)} + database ${cpu.database.toFixed(1)} s`;

/**
 * Before each measured import on PostgreSQL: the features table settled (postgres-maintenance.ts), so that no import
 * pays for the autovacuum of the one before; returns what counts autovacuum's visits during the import. SQLite has
 * no maintenance of its own to settle.
 */
async function settleBeforeImport(bench: TransferBench): Promise<() => Promise<string>> {
  const spec = bench.hubSpec;
  if (spec.engine !== 'postgres') return async () => '';
  await settleFeatures(spec.url);
  const before: Maintenance = await featuresMaintenance(spec.url);
  return async () => {
    const after = await featuresMaintenance(spec.url);
    return ` (autovacuum of the features table meanwhile: ${after.autovacuums - before.autovacuums} vacuums, ${after.autoanalyzes - before.autoanalyzes} analyzes)`;
  };
}

/** CPU milliseconds per 1,000 features: steadier on a shared machine than features/s. */
const perThousand = (seconds: number, features: number) => ((seconds * 1000 * 1000) / features).toFixed(1);

const ratio = (value: number, goal: number, atMost = false) => `${value.toFixed(2)} (goal ${atMost ? '≤' : '≥'} ${goal}: ${(atMost ? value <= goal : value >= goal) ? 'met' : 'NOT met'})`;

/** A point as a user's file holds it: an id, a place, three properties. */
function point(index: number) {
  return {
    type: 'Feature' as const, id: `t${index}`, geometry: { type: 'Point' as const, coordinates: scatteredPlace(index) },
    properties: { index, name: `point ${index}`, kind: index % 2 === 0 ? 'even' : 'odd' },
  };
}

async function writeInput(file: string, features: number): Promise<number> {
  const out = createWriteStream(file);
  let lines: string[] = [];
  for (let i = 0; i < features; i++) {
    lines.push(JSON.stringify(point(i)));
    if (lines.length === 10_000) {
      await put(out, lines.join('\n') + '\n');
      lines = [];
    }
  }
  if (lines.length > 0) await put(out, lines.join('\n') + '\n');
  out.end();
  await finished(out);
  return statSync(file).size;
}

/** Runs the CLI against the hub; resolves with its wall time, or after `killAfterMs` with the process killed (kill -9). */
function runCli(bench: TransferBench, args: string[], killAfterMs?: number): Promise<{ seconds: number; code: number | null; stderr: string }> {
  const began = performance.now();
  const child = spawn(process.execPath, [MAIN, ...args, '--url', bench.hub.origin, '--progress-interval', '3600'], {
    env: { ...process.env, HUB_TOKEN: bench.hub.token }, stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve) => child.once('close', (code) => {
    clearTimeout(timer);
    resolve({ seconds: (performance.now() - began) / 1000, code, stderr });
  }));
}

async function importFile(bench: TransferBench, file: string, space: string, extra: string[] = [], killAfterMs?: number) {
  const result = await runCli(bench, ['import', file, '--space', space, '--create', space, '--chunk', String(CHUNK), '--parallel', String(PARALLEL), ...extra], killAfterMs);
  if (killAfterMs === undefined && result.code !== 0) throw new Error(`import into ${space} exited with ${result.code}: ${result.stderr}`);
  return result;
}

async function spaceCount(bench: TransferBench, space: string): Promise<number> {
  const body = await bench.client.expect(200, 'GET', `/hub/spaces/${space}/count`);
  return (JSON.parse(body.toString()) as { count: number }).count;
}

/** The floor: the same points as the hub stores them, in batches of CHUNK, into a plain table that has its indexes from the start. */
async function floorLoad(bench: TransferBench, space: string): Promise<number> {
  const table = await plainIngest(bench.plainSpec, PLAIN_TABLE, PARALLEL);
  const timestamp = Date.now();
  let seconds = 0;
  let batches: Array<() => Promise<void>> = [];
  const loadAll = async () => {
    const began = performance.now();
    await Promise.all(batches.map((load) => load()));
    seconds += (performance.now() - began) / 1000;
    batches = [];
  };
  for (let start = 0; start < bench.features; start += CHUNK) {
    const rows = [];
    for (let i = start; i < Math.min(start + CHUNK, bench.features); i++) {
      const { id, geometry, properties } = point(i);
      const parts: FeatureParts = { id, geometry, properties, namespace: { space, createdAt: timestamp, updatedAt: timestamp, tags: [] }, extra: {} };
      rows.push({ ...featureTexts(parts).stored, geometry });
    }
    // Batches are prepared outside the clock and loaded PARALLEL at a time, as the CLI keeps PARALLEL requests in flight.
    batches.push(table.prepare(rows));
    if (batches.length === PARALLEL) await loadAll();
  }
  await loadAll();
  await table.finish();
  return seconds;
}

export async function transferBench(bench: TransferBench): Promise<void> {
  const { features } = bench;
  const input = join(bench.dir, 'points.geojsonl');
  bench.log(`transfer: writing ${number(features)} points as GeoJSONSeq`);
  const inputBytes = await writeInput(input, features);
  const lines: string[][] = [['Figure', 'Hub', 'Floor', 'Ratio', 'Note']];
  try {
    bench.log('transfer: floor load');
    const floorSeconds = await floorLoad(bench, 'floor');
    bench.log('transfer: spatial-hub import into an empty space');
    const wholeMaintenance = await settleBeforeImport(bench);
    const memory = watchImportMemory(bench.hub.pid, bench.client);
    const serverPid = bench.engine.serverPid?.();
    const cpuOf = cpuMeter(bench.hub.pid, serverPid);
    const whole = await importFile(bench, input, 'transfer-whole');
    const peak = memory.stop();
    const wholeCpu = cpuOf();
    const wholeVisits = await wholeMaintenance();
    const importCpu = `CPU ms per 1,000 features: CLI ${perThousand(wholeCpu.cli, features)}, hub ${perThousand(wholeCpu.hub, features)}`
      + (serverPid === undefined ? '' : `, database ${perThousand(wholeCpu.database, features)}`);
    if ((await spaceCount(bench, 'transfer-whole')) !== features) throw new Error('the import did not write every feature');
    const importRate = features / whole.seconds;
    const floorRate = features / floorSeconds;
    const floorName = bench.engine.name === 'postgres' ? `COPY of ${CHUNK}-row batches, ${PARALLEL} connections` : `prepared INSERTs, one transaction per ${CHUNK} rows`;
    lines.push([`Import ${number(features)} points (GeoJSONSeq, CLI, ${CHUNK}/request, ${PARALLEL} in flight)`, `${number(importRate)} features/s`,
      `${number(floorRate)} features/s`, ratio(importRate / floorRate, GOALS.importVsFloor),
      `floor: ${floorName} into a plain table with its primary key and spatial index; input ${(inputBytes / 1e6).toFixed(0)} MB; ${describeImportMemory(peak, readMemory(bench.hub.pid).rssKiB * 1024)}; ${importCpu}${wholeVisits}`]);
    if (bench.hubSpec.engine === 'postgres') {
      bench.log('transfer: floor load into a copy of the hub\'s own table');
      const own = await hubTableIngest(bench.hubSpec.url, 'transfer-whole', join(bench.dir, 'hub-rows.copy'), CHUNK, PARALLEL, serverPid);
      const ownRate = features / own.seconds;
      lines.push([`Import against COPY into the hub's own table (issue 25's wording)`, `${number(importRate)} features/s`, `${number(ownRate)} features/s`,
        ratio(importRate / ownRate, GOALS.importVsFloor), `floor: the rows the hub stored, COPY of ${CHUNK}-row batches over ${PARALLEL} connections into an empty \`LIKE features INCLUDING ALL\` (its primary key and five indexes)`
          + (own.databaseCpu === undefined ? '' : `; database CPU ms per 1,000 features ${perThousand(own.databaseCpu, features)}`)]);
    }

    bench.log('transfer: iterate, then exports to GeoJSONSeq and FlatGeobuf');
    const iterateBegan = performance.now();
    const iterateHubCpu = readCpuSeconds(bench.hub.pid);
    await iterateHttpTimed(bench.client, 'transfer-whole', CHUNK);
    const iterateRate = features / ((performance.now() - iterateBegan) / 1000);
    const iterateCpu = perThousand(readCpuSeconds(bench.hub.pid) - iterateHubCpu, features);
    for (const [format, extension] of [['geojsonseq', 'geojsonl'], ['flatgeobuf', 'fgb']]) {
      const output = join(bench.dir, `export.${extension}`);
      const hubCpu = readCpuSeconds(bench.hub.pid);
      const cliCpu = endedChildrenCpuSeconds();
      const exported = await runCli(bench, ['export', '--space', 'transfer-whole', '--format', format, '--output', output, '--chunk', String(CHUNK)]);
      if (exported.code !== 0) throw new Error(`export to ${format} exited with ${exported.code}: ${exported.stderr}`);
      const cpu = `CPU ms per 1,000 features: CLI ${perThousand(endedChildrenCpuSeconds() - cliCpu, features)}, hub ${perThousand(readCpuSeconds(bench.hub.pid) - hubCpu, features)} (iterate: hub ${iterateCpu})`;
      const rate = features / exported.seconds;
      lines.push([`Export to ${format} (CLI, ${CHUNK}/page)`, `${number(rate)} features/s`, `${number(iterateRate)} features/s`,
        ratio(rate / iterateRate, GOALS.exportVsIterate), `floor: GET …/iterate?limit=${CHUNK} over HTTP, the pages read and dropped; file ${(statSync(output).size / 1e6).toFixed(0)} MB; ${cpu}`]);
      rmSync(output, { force: true });
    }

    bench.log('transfer: an import killed (kill -9) half-way and resumed');
    const resumedMaintenance = await settleBeforeImport(bench);
    const killedCpuOf = cpuMeter(bench.hub.pid, serverPid);
    const killed = await importFile(bench, input, 'transfer-resumed', [], (whole.seconds * 1000) / 2);
    const killedCpu = killedCpuOf();
    const resumedPartCpuOf = cpuMeter(bench.hub.pid, serverPid);
    // What the killed run had acknowledged, from its checkpoint: a count from the hub here would let the hub finish the
    // killed run's requests outside the clock, before the resumed run starts, which an uninterrupted import cannot do.
    const written = (JSON.parse(readFileSync(`${input}.spatial-hub-checkpoint.json`, 'utf8')) as { written: number }).written;
    const resumed = await importFile(bench, input, 'transfer-resumed', ['--resume']);
    const total = killed.seconds + resumed.seconds;
    const resumedPartCpu = resumedPartCpuOf();
    const resumedCpu = { cli: killedCpu.cli + resumedPartCpu.cli, hub: killedCpu.hub + resumedPartCpu.hub, database: killedCpu.database + resumedPartCpu.database };
    const resumedVisits = await resumedMaintenance();
    if ((await spaceCount(bench, 'transfer-resumed')) !== features) throw new Error('the resumed import did not end with every feature once');
    // An import into a larger database costs more (SQLite at 200,000: 6.4, 8.3 and 11.0 s for three in a row), and the
    // resumed one runs after the whole one: it is compared with the mean of an uninterrupted import before it and one after.
    bench.log('transfer: the uninterrupted import again, after the resumed one');
    const againMaintenance = await settleBeforeImport(bench);
    const againCpuOf = cpuMeter(bench.hub.pid, serverPid);
    const again = await importFile(bench, input, 'transfer-again');
    const againParts = againCpuOf();
    const againCpu = cpuSum(againParts);
    const againVisits = await againMaintenance();
    const reference = (whole.seconds + again.seconds) / 2;
    const referenceCpu = (cpuSum(wholeCpu) + againCpu) / 2;
    lines.push(['Import killed half-way, then --resume (total time)', `${total.toFixed(1)} s`, `${reference.toFixed(1)} s`, ratio(total / reference, GOALS.resumedVsWhole, true),
      `floor: the mean of the uninterrupted imports before (${whole.seconds.toFixed(1)} s) and after it (${again.seconds.toFixed(1)} s); against the one before alone ${(total / whole.seconds).toFixed(2)}; `
      + `killed after ${killed.seconds.toFixed(1)} s with ${number(written)} features acknowledged, resumed in ${resumed.seconds.toFixed(1)} s; `
      + `CPU of the CLI, hub and database ${cpuSum(resumedCpu).toFixed(1)} s against ${cpuSum(wholeCpu).toFixed(1)} and ${againCpu.toFixed(1)} s, ratio to their mean ${(cpuSum(resumedCpu) / referenceCpu).toFixed(2)}; `
      + `by process: killed part ${cpuParts(killedCpu)}, resumed part ${cpuParts(resumedPartCpu)}, before ${cpuParts(wholeCpu)}${wholeVisits}, after ${cpuParts(againParts)}${againVisits}${resumedVisits ? `; the killed and resumed one${resumedVisits}` : ''}`]);
  } finally {
    rmSync(input, { force: true });
    rmSync(`${input}.spatial-hub-checkpoint.json`, { force: true });
  }
  bench.table(`Import and export (issue 25, section 3; ${bench.engine.name})`, lines);
}
