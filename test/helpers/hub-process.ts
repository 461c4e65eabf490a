// Starts the real hub as a child process on a free port against a throw-away data directory (and for PostgreSQL a fresh database), for black-box tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Backend } from './backends.js';
import { createTestDatabase, type PostgresCluster, type TestDatabase } from './postgres-cluster.js';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MANIFEST = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string>; scripts: { start: string } };

/** The module `npm start` and the `spatial-hub` command run (the bundle), so tests and benchmark run the hub as users do. */
export const MAIN = join(ROOT, MANIFEST.bin['spatial-hub']);

/** The Node.js flags `npm start` gives the hub (package.json). */
export function startFlags(): string[] {
  return MANIFEST.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

export { type Backend, BACKENDS } from './backends.js';

export const ADMIN_TOKEN = 'test-admin-token_0123456789';

export interface HubProcess {
  backend: Backend;
  url: string;
  /** The HUB_ADMIN_TOKEN the hub was started with; empty when it was started without one. */
  token: string;
  dataDir: string;
  /** The HUB_STORAGE location the hub was started with. */
  storage: string;
  /**
   * The private PostgreSQL cluster behind a postgres hub: the one given in the options, or the one started
   * for it when the tests run without the runner. Undefined for a database in the run's shared cluster.
   */
  cluster?: PostgresCluster;
  process: ChildProcess;
  /** Everything the hub wrote to stdout so far. */
  readonly stdout: string;
  /** Everything the hub wrote to stderr so far. */
  readonly stderr: string;
  /** Graceful stop; removes the data directory (and the database made for the hub) unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL, as in a crash; the data directory and the database are kept. */
  kill(): Promise<void>;
}

export interface StartOptions {
  backend?: Backend;
  dataDir?: string;
  /** Added to the hub's environment; a variable set to undefined is left out (e.g. HUB_ADMIN_TOKEN, set by default). */
  env?: Record<string, string | undefined>;
  args?: string[];
  /** postgres: use this cluster instead of starting one; the caller destroys it. */
  cluster?: PostgresCluster;
  /** postgres: this HUB_STORAGE location (e.g. several databases) instead of the cluster's database. */
  storage?: string;
}

/** Databases made for a hub, by its data directory, so that a hub restarted on the same data finds its database. */
const databasesByDataDir = new Map<string, TestDatabase>();

async function postgresStorage(dataDir: string, options: StartOptions): Promise<{ location: string; cluster?: PostgresCluster; owned?: TestDatabase }> {
  if (options.storage !== undefined) return { location: options.storage, cluster: options.cluster };
  if (options.cluster) return { location: options.cluster.url, cluster: options.cluster };
  let database = databasesByDataDir.get(dataDir);
  if (!database) {
    database = await createTestDatabase();
    databasesByDataDir.set(dataDir, database);
  }
  return { location: database.url, cluster: database.cluster, owned: database };
}

/**
 * Data directories made here and not removed yet. A hub killed and not started again, or a case that fails before
 * its hub's stop(), would leave its directory in the system's temporary directory: the test process removes what is
 * left when it exits.
 */
const madeDataDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of madeDataDirs) rmSync(dir, { recursive: true, force: true });
});

export async function startHub(options: StartOptions = {}): Promise<HubProcess> {
  const backend = options.backend ?? 'sqlite';
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hub-test-'));
  if (options.dataDir === undefined) madeDataDirs.add(dataDir);
  const postgres = backend === 'postgres' ? await postgresStorage(dataDir, options) : undefined;
  const storage = postgres?.location ?? `sqlite:${join(dataDir, 'hub.db')}`;
  const storageArgs = postgres ? ['--storage', postgres.location] : [];
  const child = spawn(process.execPath, [...startFlags(), MAIN, '--port', '0', '--data-dir', dataDir, ...storageArgs, ...(options.args ?? [])], {
    // One process unless the test (or the run's environment) asks for workers: faster to start, and every request meets the
    // same caches. test/http/workers.test.ts covers the workers.
    env: { HUB_WORKERS: '1', ...process.env, HUB_ADMIN_TOKEN: ADMIN_TOKEN, HUB_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let stdout = '';
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stdout += chunk.toString();
      const match = /Listening on (http:\/\/[^/\s]+)/.exec(stdout);
      if (match) resolve(match[1]);
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      stderr += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`hub exited with ${code} before listening:\n${output}`)));
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const token = options.env && 'HUB_ADMIN_TOKEN' in options.env ? options.env.HUB_ADMIN_TOKEN ?? '' : ADMIN_TOKEN;
  return {
    backend, url, token, dataDir, storage, cluster: postgres?.cluster, process: child,
    get stdout() { return stdout; },
    get stderr() { return stderr; },
    async stop(stopOptions = {}) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      if (stopOptions.keepData) return;
      rmSync(dataDir, { recursive: true, force: true });
      madeDataDirs.delete(dataDir);
      if (postgres?.owned) {
        databasesByDataDir.delete(dataDir);
        await postgres.owned.remove();
      }
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
