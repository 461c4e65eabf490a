// A small bbox 100 versions back against the same bbox at HEAD (issue 23): one hub, the two reads taking turns.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startPostgresCluster, type PostgresCluster } from '../test/helpers/postgres-cluster.js';
import { seededRandom } from '../test/helpers/seeded-random.js';
import { HubClient } from './http.js';
import { startBenchHub } from './hub-server.js';

const POINTS = 200_000;
const PUT_SIZE = 10_000;
/** Versions of changes after the fill, each moving CHANGED random points elsewhere. */
const VERSIONS_BACK = 100;
const CHANGED = 100;
/** Points spread over 20° × 20°: a box of BOX° a side holds about 20 of them. */
const AREA = { west: -10, south: 40, side: 20 };
const BOX = 0.2;
const CONCURRENCY = 4;
const TURN_MS = 3000;
const TURNS = 6;

function usage(): never {
  throw new Error('Usage: node dist/bench/version-reads.js --engine sqlite|postgres');
}

const random = seededRandom(2023);
const place = (): [number, number] => [AREA.west + random() * AREA.side, AREA.south + random() * AREA.side];
const feature = (id: number, n: number) => ({ type: 'Feature', id: `p${id}`, geometry: { type: 'Point', coordinates: place() }, properties: { n, name: `point ${id}` } });

async function fill(client: HubClient, space: string): Promise<number> {
  let head = -1;
  for (let start = 0; start < POINTS; start += PUT_SIZE) {
    const features = Array.from({ length: PUT_SIZE }, (_, i) => feature(start + i, 0));
    const answer = await client.request('PUT', `/hub/spaces/${space}/features`, JSON.stringify({ type: 'FeatureCollection', features }), { accept: 'application/x-empty' });
    if (answer.status !== 204) throw new Error(`PUT answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
    head++;
  }
  for (let version = 1; version <= VERSIONS_BACK; version++) {
    const features = Array.from({ length: CHANGED }, () => feature(Math.floor(random() * POINTS), version));
    const answer = await client.request('PUT', `/hub/spaces/${space}/features`, JSON.stringify({ type: 'FeatureCollection', features }), { accept: 'application/x-empty' });
    if (answer.status !== 204) throw new Error(`PUT answered ${answer.status}`);
    head++;
  }
  return head;
}

/** Requests per second of `paths` (taken in turn) over TURN_MS with CONCURRENCY requests in flight, and the features they returned. */
async function turn(client: HubClient, paths: string[]): Promise<{ rate: number; features: number }> {
  let next = 0;
  let done = 0;
  let features = 0;
  const end = Date.now() + TURN_MS;
  const started = process.hrtime.bigint();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (Date.now() < end) {
      const answer = await client.request('GET', paths[next++ % paths.length]);
      if (answer.status !== 200) throw new Error(`GET answered ${answer.status}: ${answer.body.toString().slice(0, 300)}`);
      features += (answer.body.toString().match(/"Feature"/g) ?? []).length;
      done++;
    }
  }));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { rate: done / seconds, features: features / done };
}

/**
 * The plan of the hub's small-box statement at each version (feature-store.ts `read` and `atVersion`, values inlined):
 * far back the history part should take the GiST on (sid, geom), a version back (sid, version_to).
 */
async function explain(url: string, versions: number[]): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('VACUUM (ANALYZE) features');
    await client.query('VACUUM (ANALYZE) feature_history');
    const { rows: [{ sid }] } = await client.query<{ sid: string }>('SELECT max(sid) AS sid FROM features');
    for (const version of versions) {
      const [west, south] = [0, 50];
      const box = `ST_MakeEnvelope(${west}, ${south}, ${west + BOX}, ${south + BOX}, 4326)`;
      const from = `(SELECT seq, sid, id, feature, properties, geom, geometry_type, tags FROM features WHERE sid = ${sid} AND (version IS NULL OR version <= ${version})
         UNION ALL SELECT seq, sid, id, feature, properties, geom, geometry_type, tags FROM feature_history
          WHERE sid = ${sid} AND version_to > ${version} AND (version_from IS NULL OR version_from <= ${version}))`;
      const sql = `SELECT string_agg(p.feature, ','), count(*)::int, max(p.seq) FROM (
        SELECT f.seq, f.feature FROM ${from} f WHERE f.sid = ${sid} AND f.seq > 0 AND (f.geom && ${box} AND ST_Intersects(f.geom, ${box})) ORDER BY f.seq LIMIT 1000) p`;
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${sql}`);
      // The plan's nodes and figures, without the long conditions.
      console.log(`EXPLAIN (ANALYZE, BUFFERS) of a ${BOX}° box at version ${version}:`);
      console.log(rows.map((row) => row['QUERY PLAN']).filter((line) => !/Cond:|Filter:/.test(line)).join('\n'));
    }
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const engine = process.argv[2] === '--engine' ? process.argv[3] : usage();
  if (engine !== 'sqlite' && engine !== 'postgres') usage();
  const dataDir = mkdtempSync(join(tmpdir(), 'version-reads-'));
  let cluster: PostgresCluster | undefined;
  try {
    if (engine === 'postgres') cluster = await startPostgresCluster();
    const hub = await startBenchHub({ dataDir, env: cluster ? { HUB_STORAGE: cluster.url } : {} });
    try {
      const client = new HubClient(hub.origin, hub.token);
      const created = await client.request('POST', '/hub/spaces', JSON.stringify({ title: 'version reads', versionsToKeep: 1000 }), { 'content-type': 'application/json' });
      const space = (JSON.parse(created.body.toString()) as { id: string }).id;
      const filled = Date.now();
      const head = await fill(client, space);
      const back = head - VERSIONS_BACK;
      console.log(`${engine}: ${POINTS} points, HEAD ${head}, reading version ${back} (${VERSIONS_BACK * CHANGED} changes since); filled in ${Date.now() - filled} ms`);
      if (cluster) await explain(cluster.url, [back, head - 1]);
      const boxes = Array.from({ length: 64 }, () => {
        const [west, south] = place();
        return `/hub/spaces/${space}/bbox?west=${west}&south=${south}&east=${west + BOX}&north=${south + BOX}`;
      });
      const at = boxes.map((path) => `${path}&version=${back}`);
      await turn(client, boxes);
      await turn(client, at);
      const rates: Record<'head' | 'version', number[]> = { head: [], version: [] };
      for (let i = 0; i < TURNS; i++) {
        const h = await turn(client, boxes);
        const v = await turn(client, at);
        rates.head.push(h.rate);
        rates.version.push(v.rate);
        console.log(`turn ${i + 1}: HEAD ${h.rate.toFixed(0)} req/s (${h.features.toFixed(1)} features), version ${back}: ${v.rate.toFixed(0)} req/s (${v.features.toFixed(1)} features)`);
      }
      const median = (values: number[]) => [...values].sort((x, y) => x - y)[Math.floor(values.length / 2)];
      const [headRate, versionRate] = [median(rates.head), median(rates.version)];
      console.log(`median: HEAD ${headRate.toFixed(0)} req/s (${(1000 * CONCURRENCY / headRate).toFixed(2)} ms each), version ${versionRate.toFixed(0)} req/s `
        + `(${(1000 * CONCURRENCY / versionRate).toFixed(2)} ms each): ${(100 * versionRate / headRate).toFixed(0)}% of HEAD (goal 50%)`);
    } finally {
      await hub.stop();
    }
  } finally {
    await cluster?.destroy();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
