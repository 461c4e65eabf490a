// Throw-away PostgreSQL + PostGIS for tests: private clusters (initdb into a temp dir, a free port, removed afterwards) and databases cloned in the test run's shared cluster.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

/** Where the PostgreSQL 15 server binaries are; HUB_TEST_PG_BIN points elsewhere. */
const PG_BIN = process.env.HUB_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const OS_USER = 'postgres';
const SUPERUSER = 'hub';
const DATABASE = 'hub';

/**
 * Set by the test runner (test/run-tests.ts) for every test file: the URL of a database with PostGIS in the
 * run's one cluster, used as the template of each test database.
 */
export const TEMPLATE_URL_ENV = 'HUB_TEST_POSTGRES_TEMPLATE';

/** initdb and the server refuse to run as root: then they run as the `postgres` OS user. */
const asRoot = process.getuid?.() === 0;

export interface PostgresCluster {
  /** `postgres://hub@127.0.0.1:<port>/hub`, a database with PostGIS. */
  url: string;
  port: number;
  dir: string;
  /** A further empty database with PostGIS in the same cluster; returns its URL. */
  createDatabase(name: string): Promise<string>;
  /** Fast shutdown, as an outage; the data stays. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes every file. */
  destroy(): Promise<void>;
}

/** Why the PostgreSQL backend cannot run here, or undefined when it can. */
export function postgresUnavailable(): string | undefined {
  for (const binary of ['initdb', 'pg_ctl', 'postgres', 'pg_config']) {
    if (!existsSync(join(PG_BIN, binary))) return `PostgreSQL 15 is not installed (no ${join(PG_BIN, binary)})`;
  }
  const shareDir = execFileSync(join(PG_BIN, 'pg_config'), ['--sharedir'], { encoding: 'utf8' }).trim();
  if (!existsSync(join(shareDir, 'extension', 'postgis.control'))) return `PostGIS is not installed for PostgreSQL 15 (no postgis.control in ${shareDir}/extension)`;
  if (asRoot) {
    try {
      execFileSync('id', ['-u', OS_USER], { stdio: 'ignore' });
    } catch {
      return `running as root and there is no "${OS_USER}" OS user to run PostgreSQL as`;
    }
  }
  return undefined;
}

function command(binary: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', OS_USER, '--', join(PG_BIN, binary), ...args]] : [join(PG_BIN, binary), args];
}

async function pgTool(binary: string, args: string[], environment: Record<string, string> = {}): Promise<void> {
  const [file, fullArgs] = command(binary, args);
  await run(file, fullArgs, { env: { ...process.env, ...environment } });
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function withClient(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

/** Clusters of this process still on disk; removed at exit even when a test forgets to or the run is interrupted. */
const live = new Set<{ data: string; dir: string }>();

function removeLiveClusters(): void {
  for (const cluster of live) {
    const [file, args] = command('pg_ctl', ['stop', '-D', cluster.data, '-m', 'immediate']);
    try {
      execFileSync(file, args, { stdio: 'ignore' });
    } catch {
      // Already stopped.
    }
    rmSync(cluster.dir, { recursive: true, force: true });
  }
  live.clear();
}

process.once('exit', removeLiveClusters);
for (const [signal, number] of [['SIGINT', 2], ['SIGTERM', 15]] as const) {
  process.once(signal, () => {
    removeLiveClusters();
    process.exit(128 + number);
  });
}

export interface ClusterOptions {
  /**
   * Further `postgresql.conf` settings, written after the cluster's own (the later line wins): the bench gives its cluster
   * the memory of a production server (bench/postgres-settings.ts); the tests keep the stock settings and a small footprint.
   */
  settings?: Record<string, string>;
  /** Further environment of the server's processes (the bench's glibc malloc tunables, bench/postgres-settings.ts). */
  environment?: Record<string, string>;
}

export async function startPostgresCluster(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'hub-pg-'));
  const data = join(dir, 'data');
  const log = join(dir, 'server.log');
  const entry = { data, dir };
  live.add(entry);
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', OS_USER], { encoding: 'utf8' }));
    const gid = Number(execFileSync('id', ['-g', OS_USER], { encoding: 'utf8' }));
    chownSync(dir, uid, gid);
  }
  // An ICU collation where 'a' < 'B', so that SQL relying on the database's default collation shows up in the tests.
  await pgTool('initdb', ['-D', data, '-U', SUPERUSER, '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8',
    '--locale-provider=icu', '--icu-locale=en-US', '--no-sync']);
  const port = await freePort();
  // Reachable from this machine only (loopback TCP), with its socket in the temp dir, well apart from any system cluster.
  appendFileSync(join(data, 'postgresql.conf'), [
    `port = ${port}`,
    `listen_addresses = '127.0.0.1'`,
    `unix_socket_directories = '${dir}'`,
    // Two test files at a time, each with a few hubs of up to 10 pooled connections.
    'max_connections = 150',
    ...Object.entries(options.settings ?? {}).map(([name, value]) => `${name} = '${value}'`),
    '',
  ].join('\n'));
  const start = () => pgTool('pg_ctl', ['start', '-D', data, '-l', log, '-w', '-t', '60'], options.environment);
  const stop = () => pgTool('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
  const base = `postgres://${SUPERUSER}@127.0.0.1:${port}`;
  const createDatabase = async (name: string): Promise<string> => {
    await withClient(`${base}/postgres`, async (client) => { await client.query(`CREATE DATABASE "${name}"`); });
    await withClient(`${base}/${name}`, async (client) => { await client.query('CREATE EXTENSION postgis'); });
    return `${base}/${name}`;
  };
  await start();
  const url = await createDatabase(DATABASE);
  return {
    url, port, dir, createDatabase, start, stop,
    async destroy() {
      await stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
      live.delete(entry);
    },
  };
}

/** A database with PostGIS for one hub. */
export interface TestDatabase {
  url: string;
  /** The private cluster holding it; undefined for a database in the test run's shared cluster, which no test may stop. */
  cluster?: PostgresCluster;
  /** Drops the database (or destroys its private cluster). */
  remove(): Promise<void>;
}

/**
 * A fresh database: under the test runner a clone of its template (CREATE DATABASE … TEMPLATE copies
 * files, far cheaper than an initdb and CREATE EXTENSION postgis); run without the runner (a test file by
 * hand), a private cluster of its own.
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env[TEMPLATE_URL_ENV];
  if (template === undefined || template === '') {
    const cluster = await startPostgresCluster();
    return { url: cluster.url, cluster, remove: () => cluster.destroy() };
  }
  const templateUrl = new URL(template);
  const templateName = templateUrl.pathname.slice(1);
  const name = `hub_${process.pid}_${randomBytes(4).toString('hex')}`;
  const maintenance = new URL('/postgres', templateUrl).href;
  await withClient(maintenance, async (client) => { await client.query(`CREATE DATABASE "${name}" TEMPLATE "${templateName}"`); });
  return {
    url: new URL(`/${name}`, templateUrl).href,
    async remove() {
      await withClient(maintenance, async (client) => { await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`); });
    },
  };
}
