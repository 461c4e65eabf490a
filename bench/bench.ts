// `npm run bench`: HTTP throughput and memory of the real hub, each figure next to its floor (the same work on storage directly).
import autocannon from 'autocannon';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { featureTexts } from '../src/hub/feature-text.js';
import type { PropertyCondition } from '../src/core/feature-query.js';
import type { FeatureWrite, SpaceKey, Storage } from '../src/storage/storage.js';
import { startFlags } from '../test/helpers/hub-process.js';
import { cityFeature, cityParts, fillDirectly, fillPlain, loadCities, pointParts, polygonCollection, polygonParts } from './data.js';
import { type BenchEngine, ENGINES, openStorage, spaceKey, type StorageSpec } from './engines.js';
import { FloorReads } from './floor-reads.js';
import { bigSpace } from './big-space.js';
import { cacheReads } from './cache-reads.js';
import { etagReads } from './etag-reads.js';
import { type BenchHub, type MemoryReading, readMemory, resetPeak, startBenchHub, watchMemory } from './hub-server.js';
import { countFeatures, HubClient, iterateHttp, iterateHttpTimed } from './http.js';
import { fastest, perSecond, type Rate, repeated, rotation, timed } from './measure.js';
import { plainTable } from './plain-tables.js';
import { ownCpuSeconds, readCpuSeconds, withCpu } from './process-cpu.js';
import { type IngestFeature, plainIngest } from './plain-ingest.js';
import { ReadTables, throughputRatio } from './read-tables.js';
import { side, takeTurns } from './turns.js';
import { virtualReads } from './virtual-reads.js';
import { ogcItems } from './ogc-items.js';
import { processorsIngest } from './processors-ingest.js';
import { spaceList } from './space-list.js';
import { scaleSpace } from './scale-space.js';
import { PROBE_FILE_ENV } from './probe-records.js';
import { transferBench } from './transfer-bench.js';
import { spatialReads } from './spatial-reads.js';
import { uploadMemory } from './upload-memory.js';
import { workerReads } from './worker-reads.js';
import { historyCosts } from './history-costs.js';
import { historyScale } from './history-scale.js';

const SECTIONS = ['spaces', 'ingest', 'get', 'iterate', 'search', 'parallel', 'million', 'spatial', 'etag', 'ogc', 'virtual', 'processors', 'upload', 'upload-memory', 'bigspace', 'scale', 'workers', 'history', 'cache', 'transfer'] as const;
type Section = (typeof SECTIONS)[number];
/** Sections that run only when named with --only: they take far longer than the rest together. */
const NAMED_ONLY: readonly Section[] = ['scale', 'transfer'];
/** Features of the scale section's space unless --size says otherwise. */
const DEFAULT_SCALE_SIZE = 1_000_000;
/** Points the transfer section imports unless --size says otherwise: the 10 million, a quick run's 200,000. */
const transferSize = (quick: boolean) => (quick ? 200_000 : 10_000_000);

interface Settings {
  engine: BenchEngine;
  quick: boolean;
  sections: Set<Section>;
  /** Directory for hub CPU profiles (`--profile`); undefined means no profiling. */
  profileDir?: string;
  /** Features of the scale section's space or the transfer section's import (`--size 10m`), when given. */
  size?: number;
  /** `--probe`: the hub records what each timed small box waited for (hub-probe.ts), and the scale section prints it. */
  probe: boolean;
}

/** `10m`, `2.5m`, `500k` or a bare number of features. */
function parseSize(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([km]?)$/i.exec(text);
  if (!match) throw new Error(`--size takes a number of features such as 10m, 500k or 20000, not "${text}"`);
  const scale = { '': 1, k: 1_000, m: 1_000_000 }[match[2].toLowerCase() as '' | 'k' | 'm'];
  return Math.round(Number(match[1]) * scale);
}

function parseArguments(argv: string[]): Settings {
  let engineName = 'sqlite';
  let quick = false;
  let sections = new Set<Section>(SECTIONS.filter((section) => !NAMED_ONLY.includes(section)));
  let profileDir: string | undefined;
  let size: number | undefined;
  let probe = false;
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    const value = () => inline ?? argv[++i];
    if (flag === '--storage') engineName = value();
    else if (flag === '--quick') quick = true;
    else if (flag === '--only') {
      const names = value().split(',');
      const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
      if (unknown.length > 0) throw new Error(`Unknown section ${unknown.join(', ')}; sections: ${SECTIONS.join(', ')}`);
      sections = new Set(names as Section[]);
    } else if (flag === '--profile') profileDir = inline ?? join(tmpdir(), 'hub-bench-profiles');
    else if (flag === '--size') size = parseSize(value());
    else if (flag === '--probe') probe = true;
    else throw new Error(`Unknown argument "${argv[i]}". Usage: bench [--storage ${Object.keys(ENGINES).join('|')}] [--quick] [--only ${SECTIONS.join(',')}] [--size 10m] [--profile[=dir]] [--probe]`);
  }
  const engine = ENGINES[engineName];
  if (!engine) throw new Error(`Unknown storage "${engineName}"; known: ${Object.keys(ENGINES).join(', ')}`);
  // The read figures run on the city space, so they need the ingest.
  if (['get', 'iterate', 'search'].some((section) => sections.has(section as Section))) sections.add('ingest');
  return { engine, quick, sections, profileDir, size, probe };
}

/** Work sizes: the default run stays within a few minutes on two cores; `--quick` within one. */
function sizes(quick: boolean) {
  return {
    cities: quick ? 20_000 : Infinity,
    batch: 1000,
    /** Batches in flight during the HTTP ingest, as a bulk loader keeps the server busy between answers. */
    ingestInFlight: 2,
    ingestRuns: 2,
    getSeconds: quick ? 2 : 5,
    floorSeconds: quick ? 1 : 2,
    iteratePage: 10_000,
    /** Read figures alternate HTTP and floor this many times, each turn repeating its work for `turnSeconds`. */
    turns: 3,
    turnSeconds: quick ? 0.5 : 1,
    uploadFeatures: quick ? 20_000 : 100_000,
    millionPoints: quick ? 200_000 : 1_000_000,
    fillBatch: 50_000,
    millionPage: 100_000,
    /** The OGC items space: 135,000 cities, as the issue asks. */
    ogcFeatures: quick ? 50_000 : 135_000,
    ogcTurns: quick ? 4 : 10,
    /** The virtual section: two upstreams of 100,000 points against one space of 200,000 (the figure). */
    virtualPerUpstream: quick ? 25_000 : 100_000,
    virtualTurns: quick ? 3 : 6,
    /** Timed 10,000-feature PUTs per side in the processors section. */
    processorsTurns: quick ? 6 : 10,
    /** The history section's 1,000-feature PUTs per space: more than the 100 versions its read at a version goes back. */
    historyWrites: 110,
    /** The long histories: changesets streamed over 100,000 versions, 1,000,000 old versions pruned. */
    changesetVersions: quick ? 20_000 : 100_000,
    pruneVersions: quick ? 100_000 : 1_000_000,
    /** The cache section's space, and how often its session replays the view's tiles. */
    cachePoints: quick ? 50_000 : 200_000,
    cacheRounds: quick ? 20 : 50,
  };
}

interface Row {
  figure: string;
  unit: string;
  http: Rate;
  floor: Rate;
  /** Minimum HTTP/floor ratio the figure should reach. */
  goal?: number;
  note?: string;
}

interface MemoryRow {
  figure: string;
  before: MemoryReading;
  peak: MemoryReading;
  after: MemoryReading;
}

/** The floors' storage and plain tables: written on this thread, read (timed) in the floor worker. */
interface Floor {
  store: Storage;
  spec: StorageSpec;
  plainSpec: StorageSpec;
  reads: FloorReads;
}

/** The plain floor's tables (plain-tables.ts) of the cities and of the million section's points. */
const PLAIN_CITIES = 'plain_cities';
const PLAIN_MILLION = 'plain_million';

const rows: Row[] = [];
const readTables = new ReadTables();
const memoryRows: MemoryRow[] = [];
const notes: string[] = [];
/** Tables a section lays out itself, each under its heading. */
const sectionTables: Array<{ heading: string; lines: string[][] }> = [];

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`);
const number = (value: number) => Math.round(value).toLocaleString('en-US');
const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;

/** Measures the HTTP side and its floor in turns (turns.ts) and keeps each side's best turn. */
async function alternate(turns: number, http: (turn: number) => Promise<Rate>, floor: () => Promise<Rate>): Promise<{ http: Rate; floor: Rate }> {
  const sides = { http: side(http), floor: side(floor) };
  await takeTurns(turns, [sides.http, sides.floor]);
  return { http: sides.http.best(), floor: sides.floor.best() };
}

/** Runs `work` against the hub inside a CPU window of the hub process and, on PostgreSQL, the database server. */
function onHub<T extends Rate & { requests: number }>(hub: BenchHub, settings: Settings, work: () => Promise<T>) {
  return withCpu(() => readCpuSeconds(hub.pid), settings.engine.serverPid?.(), work);
}

async function createSpace(client: HubClient, title: string): Promise<string> {
  const body = await client.expect(200, 'POST', '/hub/spaces', JSON.stringify({ title }), { 'content-type': 'application/json' });
  return (JSON.parse(body.toString()) as { id: string }).id;
}

async function httpCount(client: HubClient, space: string): Promise<number> {
  const body = await client.expect(200, 'GET', `/hub/spaces/${space}/count`);
  return (JSON.parse(body.toString()) as { count: number }).count;
}

/** Writes prepared rows in one storage transaction per batch, as the hub does for one request. */
async function storeBatch(storage: Storage, space: SpaceKey, upserts: FeatureWrite[], timestamp: number): Promise<void> {
  await storage.features.write(space, upserts.map((row) => row.id), () => ({ plan: { upserts, deletes: [], timestamp }, result: undefined }));
}

/** Runs `work` on every item with a fixed number of them in flight, in order. */
async function inLanes<T>(items: T[], inFlight: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
}

/** Sends the bodies with a fixed number of requests in flight. */
async function sendAll(client: HubClient, path: string, bodies: Buffer[], inFlight: number): Promise<void> {
  await inLanes(bodies, inFlight, async (body) => { await client.expect(204, 'PUT', path, body, { accept: 'application/x-empty' }); });
}

interface CitySpace {
  httpSpace: string;
  floorSpace: string;
  ids: string[];
}

async function ingest(hub: BenchHub, client: HubClient, floor: Floor, settings: Settings): Promise<CitySpace> {
  const size = sizes(settings.quick);
  const cities = loadCities(size.cities);
  const ids = cities.map((city) => String(city.cityId));
  log(`ingest: ${cities.length} cities in batches of ${size.batch}, hub, own-SQL floor and plain floor taking turns`);

  const bodies: Buffer[] = [];
  for (let i = 0; i < cities.length; i += size.batch) {
    const features = cities.slice(i, i + size.batch).map(cityFeature);
    bodies.push(Buffer.from(JSON.stringify({ type: 'FeatureCollection', features })));
  }
  const timestamp = Date.now();
  /** The batches as the hub stores them in `space`, for the floors. */
  const storedBatches = (space: string) => {
    const batches: Array<Array<FeatureWrite & IngestFeature>> = [];
    for (let i = 0; i < cities.length; i += size.batch) {
      batches.push(cities.slice(i, i + size.batch).map((city) => {
        const parts = cityParts(city, space, timestamp);
        return { ...featureTexts(parts).stored, geometry: parts.geometry };
      }));
    }
    return batches;
  };
  const serverPid = settings.engine.serverPid?.();
  // Each side ingests into a new space (the plain floor: a new table) once per turn and keeps its fastest turn; the first turn also warms up the JIT.
  const httpSpaces: string[] = [];
  const floorSpaces: string[] = [];
  const sides = {
    hub: side(async () => {
      const space = await createSpace(client, 'bench cities');
      const rate = await onHub(hub, settings, async () => ({
        ...await timed(async () => {
          await sendAll(client, `/hub/spaces/${space}/features`, bodies, size.ingestInFlight);
          return cities.length;
        }),
        requests: bodies.length,
      }));
      const stored = await httpCount(client, space);
      if (stored !== cities.length) throw new Error(`the hub holds ${stored} of ${cities.length} cities`);
      httpSpaces.push(space);
      return rate;
    }),
    own: side(async () => {
      const space = `cities-${floorSpaces.length}`;
      const { key } = await floor.store.spaces.create(space, { title: 'bench cities', createdAt: timestamp, updatedAt: timestamp }, timestamp);
      const batches = storedBatches(space);
      const rate = await timed(async () => {
        await inLanes(batches, size.ingestInFlight, (batch) => storeBatch(floor.store, key, batch, timestamp));
        return cities.length;
      });
      floorSpaces.push(space);
      return rate;
    }),
    plain: side(async () => {
      const table = await plainIngest(floor.plainSpec, PLAIN_CITIES, size.ingestInFlight);
      const loads = storedBatches(httpSpaces[0]).map((batch) => table.prepare(batch));
      const rate = await withCpu(ownCpuSeconds, serverPid, async () => ({
        ...await timed(async () => {
          await inLanes(loads, size.ingestInFlight, (load) => load());
          return cities.length;
        }),
        requests: loads.length,
      }));
      await table.finish();
      return rate;
    }),
  };
  await takeTurns(size.ingestRuns, [sides.hub, sides.own, sides.plain]);
  await settings.engine.afterBulkLoad?.();
  const row = {
    section: 'ingest', figure: `Ingest (PUT ${size.batch}/request, ${size.ingestInFlight} in flight)`, unit: 'features/s',
    hub: sides.hub.best(), plain: sides.plain.best(), own: sides.own.best(),
    note: `${cities.length} cities, best of ${size.ingestRuns} turns; a request is a batch of ${size.batch}`,
  };
  readTables.heading('ingest', `Ingest (CPU per request: per PUT of ${size.batch} features, of the hub process and its database; `
    + 'for the plain floor, of the benchmark process and the database)');
  readTables.add(row);
  readTables.goal({ label: 'Ingest vs own-SQL floor (issues 2, 3)', value: throughputRatio(row, 'own'), bound: settings.engine.goals.ingest, at: 'least' });
  const { ingest: plainGoal } = settings.engine.goals.plain ?? {};
  if (plainGoal !== undefined) readTables.goal({ label: 'Ingest vs plain floor, COPY (issue 22)', value: throughputRatio(row, 'plain'), bound: plainGoal, at: 'least' });
  return { httpSpace: httpSpaces[0], floorSpace: floorSpaces[0], ids };
}

async function getById(hub: BenchHub, floor: Floor, space: CitySpace, settings: Settings): Promise<void> {
  const size = sizes(settings.quick);
  const connections = 10;
  log(`GET by id: autocannon, ${connections} connections, ${size.turns} turns of ${size.getSeconds} s per side after a warm-up`);
  const nextId = rotation(space.ids);
  const getFeatures = (seconds: number) => autocannon({
    url: hub.origin,
    connections,
    duration: seconds,
    headers: { authorization: `Bearer ${hub.token}` },
    requests: [{
      method: 'GET',
      setupRequest: (request) => ({ ...request, path: `/hub/spaces/${space.httpSpace}/features/${nextId()}` }),
    }],
  });
  // The route's code is compiled by its first thousands of requests (the health route's by the ingest before it):
  // without a warm-up the first turn measured the compiler.
  await getFeatures(1);
  const hubSide = side(() => onHub(hub, settings, async () => {
    const result = await getFeatures(size.getSeconds);
    if (result.errors > 0 || result.non2xx > 0) throw new Error(`GET by id: ${result.errors} errors, ${result.non2xx} non-2xx answers`);
    return { items: result.requests.total, requests: result.requests.total, seconds: result.duration, latency: result.latency };
  }));
  // The same load on the health route, which touches no storage, shows what the HTTP stack alone allows.
  const healthSide = side(async () => {
    const result = await autocannon({ url: `${hub.origin}/hub`, connections, duration: size.getSeconds });
    return { items: result.requests.total, seconds: result.duration };
  });
  const ownSide = side(() => floor.reads.run('getById', {
    spec: floor.spec, spaceId: space.floorSpace, ids: space.ids, seconds: size.getSeconds, concurrency: connections,
  }));
  const plainSide = side(() => floor.reads.run('plainGetById', {
    spec: floor.plainSpec, table: PLAIN_CITIES, ids: space.ids, seconds: size.getSeconds, concurrency: connections,
  }));
  await takeTurns(size.turns, [hubSide, healthSide, ownSide, plainSide]);
  const http = hubSide.best();
  const health = healthSide.best();
  const floorRate = ownSide.best();
  const plain = plainSide.best();
  const floorName = settings.engine.name === 'postgres' ? 'one SELECT by primary key' : 'storage lookup';
  const row = {
    section: 'get', figure: `GET feature by id (${connections} connections)`, unit: 'requests/s', hub: http, plain, own: floorRate,
    note: `own-SQL floor: ${floorName}; best of ${size.turns} turns; latency avg ${http.latency.average} ms, p99 ${http.latency.p99} ms`,
  };
  readTables.add(row);
  const { getById: goal } = settings.engine.goals;
  if (goal !== undefined) readTables.goal({ label: `GET by id vs ${floorName} (own-SQL floor; issue 11)`, value: throughputRatio(row, 'own'), bound: goal, at: 'least' });
  rows.push({
    figure: 'GET feature by id vs GET /hub', unit: 'requests/s', http, floor: health,
    goal: settings.engine.goals.getByIdVsHealth, note: 'floor: GET /hub, which reads no storage',
  });
  if (settings.engine.statementsDone) {
    const requests = 200;
    const before = await settings.engine.statementsDone();
    const client = new HubClient(hub.origin, hub.token);
    for (let i = 0; i < requests; i++) await client.expect(200, 'GET', `/hub/spaces/${space.httpSpace}/features/${nextId()}`);
    client.close();
    // The second reading's own query counts once.
    const statements = await settings.engine.statementsDone() - before - 1;
    notes.push(`Database statements per GET by id (pg_stat_database over ${requests} GETs): ${(statements / requests).toFixed(2)}.`);
  }
}

/** Four streams of PUTs into one space against one stream, in the same run: writers to one space must not queue. */
async function parallelWrites(client: HubClient, settings: Settings): Promise<void> {
  const perStream = settings.quick ? 10 : 25;
  const batch = 1000;
  const bodies = (stream: number) => Array.from({ length: perStream }, (_, request) => Buffer.from(JSON.stringify({
    type: 'FeatureCollection',
    features: Array.from({ length: batch }, (_, i) => cityFeature({
      cityId: stream * 10_000_000 + request * batch + i, name: `p${stream}-${request}-${i}`, country: 'XX',
      adminCode: '', featureCode: 'PPL', population: i, loc: { type: 'Point', coordinates: [(i % 360) - 180, (request % 180) - 90] },
    })),
  })));
  const streams = async (count: number): Promise<Rate> => {
    const space = await createSpace(client, `bench parallel ${count}`);
    const prepared = Array.from({ length: count }, (_, stream) => bodies(stream));
    return timed(async () => {
      await Promise.all(prepared.map(async (requests) => {
        for (const body of requests) await client.expect(204, 'PUT', `/hub/spaces/${space}/features`, body, { accept: 'application/x-empty' });
      }));
      return count * perStream * batch;
    });
  };
  log(`parallel writes: 1 and 4 streams of ${perStream} PUTs of ${batch} features into one space`);
  const one = fastest([await streams(1), await streams(1)]);
  const four = fastest([await streams(4), await streams(4)]);
  rows.push({
    figure: 'Four parallel PUT streams into one space vs one stream', unit: 'features/s', http: four, floor: one,
    goal: settings.engine.goals.parallelWrites, note: `floor: one stream; ${perStream} PUTs of ${batch} per stream`,
  });
}

async function iterate(hub: BenchHub, client: HubClient, floor: Floor, space: CitySpace, settings: Settings): Promise<void> {
  const size = sizes(settings.quick);
  log(`iterate: whole city space, limit ${size.iteratePage}`);
  const check = (count: number) => {
    if (count !== space.ids.length) throw new Error(`iterate returned ${count} of ${space.ids.length} features`);
    return count;
  };
  check(await iterateHttp(client, space.httpSpace, size.iteratePage));
  const sides = {
    hub: side(() => onHub(hub, settings, async () => {
      let requests = 0;
      const rate = await repeated(size.turnSeconds, 1, async () => {
        requests += await iterateHttpTimed(client, space.httpSpace, size.iteratePage);
        return space.ids.length;
      });
      return { ...rate, requests };
    })),
    own: side(() => floor.reads.run('iterate', {
      spec: floor.spec, spaceId: space.floorSpace, limit: size.iteratePage, seconds: size.turnSeconds, expected: space.ids.length,
    })),
    plain: side(() => floor.reads.run('plainIterate', {
      spec: floor.plainSpec, table: PLAIN_CITIES, limit: size.iteratePage, seconds: size.turnSeconds, expected: space.ids.length,
    })),
  };
  await takeTurns(size.turns, [sides.hub, sides.own, sides.plain]);
  const row = {
    section: 'iterate', figure: `Iterate (limit ${size.iteratePage}, follow handle)`, unit: 'features/s',
    hub: sides.hub.best(), plain: sides.plain.best(), own: sides.own.best(),
    note: 'a request is a page; plain floor: keyset on the primary key',
  };
  readTables.add(row);
  readTables.goal({ label: 'Iterate vs own-SQL floor (issues 2, 3)', value: throughputRatio(row, 'own'), bound: settings.engine.goals.read, at: 'least' });
}

async function search(hub: BenchHub, client: HubClient, floor: Floor, space: CitySpace, settings: Settings): Promise<void> {
  const size = sizes(settings.quick);
  log('property search: population > 100000');
  const condition: PropertyCondition = { path: ['properties', 'population'], op: 'gt', values: [100000] };
  let httpCount = 0;
  const sides = {
    hub: side(() => onHub(hub, settings, async () => {
      let requests = 0;
      const rate = await repeated(size.turnSeconds, 2, async () => {
        const body = await client.expect(200, 'GET', `/hub/spaces/${space.httpSpace}/search?p.population=gt=100000&limit=100000`);
        requests++;
        httpCount = countFeatures(body);
        return httpCount;
      });
      return { ...rate, requests };
    })),
    own: side(() => floor.reads.run('search', { spec: floor.spec, spaceId: space.floorSpace, condition, limit: 100000, seconds: size.turnSeconds })),
    plain: side(() => floor.reads.run('plainSearch', {
      spec: floor.plainSpec, table: PLAIN_CITIES, property: 'population', above: 100000, limit: 100000, seconds: size.turnSeconds,
    })),
  };
  await takeTurns(size.turns, [sides.hub, sides.own, sides.plain]);
  const row = { section: 'search', figure: 'Property search (p.population>100000)', unit: 'features/s', hub: sides.hub.best(), plain: sides.plain.best(), own: sides.own.best(),
    note: `${httpCount} features per search, full scan of ${space.ids.length}` };
  for (const [name, count] of [['storage', row.own], ['the plain floor', row.plain]] as const) {
    if (count.count !== httpCount) throw new Error(`search found ${httpCount} features over HTTP and ${count.count} in ${name}`);
  }
  readTables.add(row);
  readTables.goal({ label: 'Property search vs own-SQL floor (issues 2, 3)', value: throughputRatio(row, 'own'), bound: settings.engine.goals.read, at: 'least' });
}

async function settle(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 500));
}

/** Runs `work` while watching the hub's memory; the peak is reset first where the kernel allows. */
async function withMemory<T>(hub: BenchHub, figure: string, work: () => Promise<T>): Promise<T> {
  const before = readMemory(hub.pid);
  const note = 'VmHWM could not be reset: it is the peak since the hub started.';
  if (!resetPeak(hub.pid) && !notes.includes(note)) notes.push(note);
  const watch = watchMemory(hub.pid);
  const result = await work();
  const peak = watch.stop();
  await settle();
  memoryRows.push({ figure, before, peak, after: readMemory(hub.pid) });
  return result;
}

async function upload(hub: BenchHub, client: HubClient, floor: Floor, settings: Settings): Promise<void> {
  const size = sizes(settings.quick);
  const body = Buffer.from(polygonCollection(size.uploadFeatures));
  const megabytes = (body.length / 1e6).toFixed(1);
  log(`large upload: ${size.uploadFeatures} polygons, ${megabytes} MB in one PUT`);
  const space = await createSpace(client, 'bench upload');
  const http = await withMemory(hub, `PUT of a ${megabytes} MB FeatureCollection`, () => timed(async () => {
    await client.expect(204, 'PUT', `/hub/spaces/${space}/features`, body, { accept: 'application/x-empty' });
    return size.uploadFeatures;
  }));
  const stored = await httpCount(client, space);
  if (stored !== size.uploadFeatures) throw new Error(`the hub holds ${stored} of ${size.uploadFeatures} polygons`);

  const timestamp = Date.now();
  const { key } = await floor.store.spaces.create('upload', { title: 'bench upload', createdAt: timestamp, updatedAt: timestamp }, timestamp);
  const upserts: FeatureWrite[] = [];
  for (let i = 0; i < size.uploadFeatures; i++) upserts.push(featureTexts(polygonParts(i, 'upload', timestamp)).stored);
  const floorRate = await timed(async () => {
    await storeBatch(floor.store, key, upserts, timestamp);
    return upserts.length;
  });
  rows.push({ figure: `Large PUT (${megabytes} MB, 1 request)`, unit: 'features/s', http, floor: floorRate, note: 'streamed body parse' });
}

async function million(hub: BenchHub, client: HubClient, floor: Floor, settings: Settings): Promise<void> {
  const size = sizes(settings.quick);
  const space = await createSpace(client, 'bench points');
  log(`filling ${size.millionPoints} points through a second storage connection`);
  const hubSpec = settings.engine.hubSpec(hub.dataDir);
  const storage = await openStorage(hubSpec);
  try {
    const key = await spaceKey(storage, space);
    const fill = await fillDirectly(storage, key, size.millionPoints, size.fillBatch, (i, timestamp) => pointParts(i, space, timestamp));
    notes.push(`Filled ${size.millionPoints} points directly in ${fill.seconds.toFixed(1)} s (rows built and written).`);
  } finally {
    await storage.close();
  }
  log(`loading the plain floor's table ${PLAIN_MILLION}`);
  await fillPlain(await plainTable(floor.plainSpec, PLAIN_MILLION), size.millionPoints, size.fillBatch, (i, timestamp) => pointParts(i, space, timestamp));
  await settings.engine.afterBulkLoad?.();
  log(`iterating ${size.millionPoints} points over HTTP, limit ${size.millionPage}`);
  const counted = await iterateHttp(client, space, size.millionPage);
  if (counted !== size.millionPoints) throw new Error(`iterate returned ${counted} of ${size.millionPoints} points`);
  const figure = `Iterate ${size.millionPoints} points (limit ${size.millionPage})`;
  // The RSS after every page of the first timed turn shows whether memory stays flat over the whole iteration.
  const pageRss: number[] = [];
  const walk = (turn: number) => onHub(hub, settings, async () => {
    let pages = 0;
    const rate = await timed(async () => {
      pages = await iterateHttpTimed(client, space, size.millionPage, turn === 0 ? () => { pageRss.push(readMemory(hub.pid).rssKiB); } : undefined);
      return size.millionPoints;
    });
    return { ...rate, requests: pages };
  });
  const sides = {
    hub: side((turn) => (turn === 0 ? withMemory(hub, figure, () => walk(turn)) : walk(turn))),
    own: side(() => floor.reads.run('iterate', { spec: hubSpec, spaceId: space, limit: size.millionPage, seconds: 0, expected: size.millionPoints })),
    plain: side(() => floor.reads.run('plainIterate', {
      spec: floor.plainSpec, table: PLAIN_MILLION, limit: size.millionPage, seconds: 0, expected: size.millionPoints,
    })),
  };
  await takeTurns(2, [sides.hub, sides.own, sides.plain]);
  notes.push(`Hub RSS after each iterate page: ${pageRss.map((kib) => (kib / 1024).toFixed(0)).join(', ')} MiB.`);
  const row = {
    section: 'million', figure, unit: 'features/s', hub: sides.hub.best(), plain: sides.plain.best(), own: sides.own.best(),
    note: `${pageRss.length} pages; one walk per turn`,
  };
  readTables.add(row);
  readTables.goal({ label: `${figure} vs own-SQL floor (issues 2, 3)`, value: throughputRatio(row, 'own'), bound: settings.engine.goals.read, at: 'least' });
}

async function bigSpaceSection(hub: BenchHub, settings: Settings): Promise<void> {
  const size = sizes(settings.quick);
  const figures = await bigSpace(hub.origin, hub.token, settings.engine.hubSpec(hub.dataDir), {
    features: size.millionPoints, fillBatch: size.fillBatch, statisticsCalls: 5, probeEvery: 10,
  }, async () => { await settings.engine.afterBulkLoad?.(); }, log);
  const { statistics, delete: removal } = figures;
  const ms = (values: number[]) => values.map((value) => value.toFixed(0)).join(', ');
  rows.push({
    figure: `Statistics of ${number(size.millionPoints)} features`, unit: 'requests/s', http: statistics.http, floor: statistics.floor,
    note: `ms per call HTTP ${ms(statistics.httpMs)}; floor ${ms(statistics.floorMs)}; estimated: ${statistics.estimated.join(', ') || 'none'}`,
  });
  notes.push(`Delete of ${number(removal.features)} features by tag: ${removal.seconds.toFixed(1)} s; GET /hub every 10 ms meanwhile: ` +
    `${removal.probes} answers, worst ${removal.worstMs.toFixed(0)} ms, p99 ${removal.p99Ms.toFixed(0)} ms, ${removal.failed} failed.`);
}

function printTables(settings: Settings, server: string | undefined): void {
  const table = [['figure', 'HTTP', 'floor', 'HTTP/floor', 'goal', 'note']];
  for (const row of rows) {
    const ratio = perSecond(row.http) / perSecond(row.floor);
    const goal = row.goal === undefined ? '' : `≥ ${row.goal * 100}% ${ratio >= row.goal ? 'met' : 'MISSED'}`;
    table.push([row.figure, `${number(perSecond(row.http))} ${row.unit}`, `${number(perSecond(row.floor))} ${row.unit}`,
      `${(ratio * 100).toFixed(0)}%`, goal, row.note ?? '']);
  }
  const memory = [['hub memory during', 'RSS before', 'RSS peak (sampled)', 'VmHWM', 'RSS after']];
  for (const row of memoryRows) {
    memory.push([row.figure, mib(row.before.rssKiB), mib(row.peak.rssKiB), mib(row.peak.hwmKiB), mib(row.after.rssKiB)]);
  }
  const print = (lines: string[][]) => {
    const widths = lines[0].map((_, column) => Math.max(...lines.map((line) => line[column].length)));
    const format = (line: string[]) => '| ' + line.map((cell, column) => cell.padEnd(widths[column])).join(' | ') + ' |';
    process.stdout.write(format(lines[0]) + '\n');
    process.stdout.write('|' + widths.map((width) => '-'.repeat(width + 2)).join('|') + '|\n');
    for (const line of lines.slice(1)) process.stdout.write(format(line) + '\n');
  };
  process.stdout.write(`\nSpatial Data Hub benchmark: storage ${settings.engine.name}${settings.quick ? ', quick run' : ''}, Node ${process.version}\n`);
  if (server !== undefined) process.stdout.write(`${server}\n`);
  if (rows.length > 0) {
    process.stdout.write('\n');
    print(table);
  }
  readTables.print(print, (heading) => process.stdout.write(`\n${heading}\n\n`));
  if (memoryRows.length > 0) {
    process.stdout.write('\n');
    print(memory);
  }
  for (const { heading, lines } of sectionTables) {
    process.stdout.write(`\n${heading}\n\n`);
    print(lines);
  }
  for (const note of notes) process.stdout.write(`\n${note}`);
  process.stdout.write('\n');
}

async function main(): Promise<void> {
  const settings = parseArguments(process.argv.slice(2));
  const missingFlags = startFlags().filter((flag) => !process.execArgv.includes(flag));
  if (missingFlags.length > 0) log(`run through \`npm run bench\`: without ${missingFlags.join(' ')} the floor worker is not measured as the hub runs`);
  const root = mkdtempSync(join(tmpdir(), 'hub-bench-'));
  const hubDir = join(root, 'hub');
  const floorDir = join(root, 'floor');
  mkdirSync(hubDir);
  mkdirSync(floorDir);
  const nodeArgs: string[] = [];
  if (settings.profileDir) {
    mkdirSync(settings.profileDir, { recursive: true });
    nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${settings.profileDir}`);
  }
  const probeFile = settings.probe ? join(root, 'probe') : undefined;
  if (probeFile) nodeArgs.push('--import', fileURLToPath(new URL('./hub-probe.js', import.meta.url)));
  const started = performance.now();
  await settings.engine.start?.();
  const server = await settings.engine.describe?.();
  if (server !== undefined) log(server);
  // Without the answer cache: the read figures measure the read path against floors that have none; the cache section
  // starts a hub of its own with it.
  const hub = await startBenchHub({ dataDir: hubDir, env: { ...settings.engine.hubEnv(hubDir), HUB_CACHE_SIZE: '0', ...(probeFile ? { [PROBE_FILE_ENV]: probeFile } : {}) }, nodeArgs });
  const client = new HubClient(hub.origin, hub.token);
  const floorSpec = settings.engine.floorSpec(floorDir);
  const floor: Floor = {
    store: await openStorage(floorSpec), spec: floorSpec, plainSpec: settings.engine.plainSpec(floorDir),
    reads: new FloorReads({ serverPid: settings.engine.serverPid?.() }),
  };
  try {
    const sections = settings.sections;
    // First, while the hub's heap is still small: the section reports its RSS while listing.
    if (sections.has('spaces')) {
      const size = sizes(settings.quick);
      await spaceList({
        hub, client, reads: floor.reads, engine: settings.engine, turns: size.turns, turnSeconds: size.turnSeconds, alternate,
        withMemory: (figure, work) => withMemory(hub, figure, work), addRow: (row) => rows.push(row), note: (text) => notes.push(text),
      });
    }
    if (sections.has('ingest')) {
      const cities = await ingest(hub, client, floor, settings);
      if (sections.has('get')) await getById(hub, floor, cities, settings);
      if (sections.has('iterate')) await iterate(hub, client, floor, cities, settings);
      if (sections.has('search')) await search(hub, client, floor, cities, settings);
    }
    if (sections.has('parallel')) await parallelWrites(client, settings);
    // The iteration goes before the upload: V8 keeps the heap the upload grew, which would hide the iteration's own peak.
    if (sections.has('million')) await million(hub, client, floor, settings);
    if (sections.has('spatial')) {
      const size = sizes(settings.quick);
      await spatialReads({
        hub, client, reads: floor.reads, engine: settings.engine, plainSpec: floor.plainSpec, points: size.millionPoints, fillBatch: size.fillBatch,
        seconds: size.getSeconds, tables: readTables, note: (text) => notes.push(text), log,
      });
    }
    if (sections.has('etag')) {
      await etagReads({ hub, client, seconds: sizes(settings.quick).getSeconds, addRow: (row) => rows.push(row), log });
    }
    if (sections.has('cache')) {
      const size = sizes(settings.quick);
      await cacheReads({
        hub, client, engine: settings.engine, points: size.cachePoints, rounds: size.cacheRounds, turns: size.turns, seconds: size.getSeconds,
        addRow: (row) => rows.push(row), note: (text) => notes.push(text), log,
      });
    }
    if (sections.has('ogc')) {
      const size = sizes(settings.quick);
      await ogcItems({
        hub, client, engine: settings.engine, features: size.ogcFeatures, fillBatch: size.fillBatch, turns: size.ogcTurns,
        goal: settings.engine.goals.ogcVsIterate, addRow: (row) => rows.push(row), note: (text) => notes.push(text), log,
      });
    }
    if (sections.has('virtual')) {
      const size = sizes(settings.quick);
      await virtualReads({
        hub, client, engine: settings.engine, perUpstream: size.virtualPerUpstream, fillBatch: size.fillBatch, turns: size.virtualTurns,
        addRow: (row) => rows.push(row), note: (text) => notes.push(text), log,
      });
    }
    if (sections.has('processors')) {
      await processorsIngest({
        client, hubPid: hub.pid, turns: sizes(settings.quick).processorsTurns, goal: settings.engine.goals.processors,
        addRow: (row) => rows.push(row), note: (text) => notes.push(text), log,
      });
    }
    if (sections.has('history')) {
      const size = sizes(settings.quick);
      await historyCosts({
        hub, client, engine: settings.engine, points: size.millionPoints, fillBatch: size.fillBatch, writes: size.historyWrites, turns: size.turns,
        addRow: (row) => rows.push(row), note: (text) => notes.push(text), log,
      });
      await historyScale({
        hub, client, engine: settings.engine, changesetVersions: size.changesetVersions, pruneVersions: size.pruneVersions, writerSeconds: 5,
        withMemory: (figure, work) => withMemory(hub, figure, work), table: (heading, lines) => sectionTables.push({ heading, lines }), log,
      });
    }
    if (sections.has('upload')) await upload(hub, client, floor, settings);
    if (sections.has('upload-memory')) notes.push(...await uploadMemory(client, (figure, work) => withMemory(hub, figure, work), log));
    if (sections.has('bigspace')) await bigSpaceSection(hub, settings);
    if (sections.has('scale')) {
      await scaleSpace({
        hub, client, reads: floor.reads, engine: settings.engine, plainSpec: floor.plainSpec, features: settings.size ?? DEFAULT_SCALE_SIZE, probeFile,
        afterBulkLoad: async () => { await settings.engine.afterBulkLoad?.(); },
        table: (heading, lines) => sectionTables.push({ heading, lines }), log,
      });
    }
    if (sections.has('transfer')) {
      await transferBench({
        hub, client, engine: settings.engine, plainSpec: floor.plainSpec, hubSpec: settings.engine.hubSpec(hubDir), features: settings.size ?? transferSize(settings.quick), dir: root,
        table: (heading, lines) => sectionTables.push({ heading, lines }), log,
      });
    }
    if (sections.has('workers')) {
      const size = sizes(settings.quick);
      sectionTables.push({ heading: 'Every core: all workers against one process (issue 22)', lines: await workerReads({
        hub, client, engine: settings.engine, points: size.millionPoints, fillBatch: size.fillBatch, seconds: size.getSeconds, turns: size.turns,
        note: (text) => notes.push(text), log,
      }) });
    }
  } finally {
    client.close();
    await floor.reads.close();
    await floor.store.close();
    await hub.stop();
    await settings.engine.stop?.();
    rmSync(root, { recursive: true, force: true });
  }
  printTables(settings, server);
  process.stdout.write(`\nTotal run time ${((performance.now() - started) / 1000).toFixed(0)} s.\n`);
  if (settings.profileDir) process.stdout.write(`Hub CPU profile written to ${settings.profileDir}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
  process.exit(1);
});
