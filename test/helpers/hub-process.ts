// Starts the real hub as a child process on a free port against a throw-away data directory (and for PostgreSQL a private cluster), for black-box tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type PostgresCluster, postgresUnavailable, startPostgresCluster } from './postgres-cluster.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

/** The Node.js flags `npm start` gives the hub (package.json), so tests and benchmark run it as users do. */
export function startFlags(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return manifest.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

export type Backend = 'sqlite' | 'postgres';
const KNOWN_BACKENDS: readonly Backend[] = ['sqlite', 'postgres'];

/** Prints a line once per test run: every test file is a process of its own, started by the same runner. */
function announceOnce(line: string): void {
  try {
    writeFileSync(join(tmpdir(), `hub-test-notice-${process.ppid}`), line, { flag: 'wx' });
  } catch {
    return;
  }
  process.stderr.write(`${line}\n`);
}

/**
 * The storage engines the suite runs against (env HUB_TEST_BACKENDS, a comma list); each test file runs
 * its cases once per engine. Without PostgreSQL or PostGIS the postgres backend is left out with one
 * line saying so, except in CI, where both engines must run.
 */
function selectBackends(): readonly Backend[] {
  const requested = (process.env.HUB_TEST_BACKENDS ?? 'sqlite,postgres').split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = requested.filter((name) => !(KNOWN_BACKENDS as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`HUB_TEST_BACKENDS names unknown backends ${unknown.join(', ')}; known: ${KNOWN_BACKENDS.join(', ')}`);
  const backends = requested as Backend[];
  if (!backends.includes('postgres')) return backends;
  const missing = postgresUnavailable();
  if (missing === undefined) return backends;
  if (process.env.CI) throw new Error(`The postgres backend must run in CI, but ${missing}`);
  announceOnce(`postgres backend skipped: ${missing}`);
  return backends.filter((backend) => backend !== 'postgres');
}

export const BACKENDS = selectBackends();

export const ADMIN_TOKEN = 'test-admin-token_0123456789';

export interface HubProcess {
  backend: Backend;
  url: string;
  token: string;
  dataDir: string;
  /** The HUB_STORAGE location the hub was started with. */
  storage: string;
  /** The PostgreSQL cluster behind a postgres hub. */
  cluster?: PostgresCluster;
  process: ChildProcess;
  /** Graceful stop; removes the data directory (and a cluster the hub started) unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL, as in a crash; the data directory and the database are kept. */
  kill(): Promise<void>;
}

export interface StartOptions {
  backend?: Backend;
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
  /** postgres: use this cluster instead of starting one; the caller destroys it. */
  cluster?: PostgresCluster;
  /** postgres: this HUB_STORAGE location (e.g. several databases) instead of the cluster's database. */
  storage?: string;
}

/** Clusters started for a hub, by its data directory, so that a hub restarted on the same data finds its database. */
const clustersByDataDir = new Map<string, PostgresCluster>();

async function postgresStorage(dataDir: string, options: StartOptions): Promise<{ location: string; cluster?: PostgresCluster; owned: boolean }> {
  if (options.storage !== undefined) return { location: options.storage, cluster: options.cluster, owned: false };
  if (options.cluster) return { location: options.cluster.url, cluster: options.cluster, owned: false };
  let cluster = clustersByDataDir.get(dataDir);
  if (!cluster) {
    cluster = await startPostgresCluster();
    clustersByDataDir.set(dataDir, cluster);
  }
  return { location: cluster.url, cluster, owned: true };
}

export async function startHub(options: StartOptions = {}): Promise<HubProcess> {
  const backend = options.backend ?? 'sqlite';
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hub-test-'));
  const postgres = backend === 'postgres' ? await postgresStorage(dataDir, options) : undefined;
  const storage = postgres?.location ?? `sqlite:${join(dataDir, 'hub.db')}`;
  const storageArgs = postgres ? ['--storage', postgres.location] : [];
  const child = spawn(process.execPath, [...startFlags(), MAIN, '--port', '0', '--data-dir', dataDir, ...storageArgs, ...(options.args ?? [])], {
    env: { ...process.env, HUB_ADMIN_TOKEN: ADMIN_TOKEN, HUB_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Listening on (http:\/\/[^/\s]+)/.exec(output);
      if (match) resolve(match[1]);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => { output += chunk.toString(); });
    child.once('exit', (code) => reject(new Error(`hub exited with ${code} before listening:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    backend, url, token: ADMIN_TOKEN, dataDir, storage, cluster: postgres?.cluster, process: child,
    async stop(stopOptions = {}) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      if (stopOptions.keepData) return;
      rmSync(dataDir, { recursive: true, force: true });
      if (postgres?.owned && postgres.cluster) {
        clustersByDataDir.delete(dataDir);
        await postgres.cluster.destroy();
      }
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
