// Starts the real hub as a child process on a free port against a throw-away data directory, for black-box tests.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = join(ROOT, 'dist', 'src', 'main.js');

/** The storage engines the suite runs against; each test file runs its cases once per engine. */
export const BACKENDS = ['sqlite'] as const;
export type Backend = (typeof BACKENDS)[number];

export const ADMIN_TOKEN = 'test-admin-token_0123456789';

export interface HubProcess {
  backend: Backend;
  url: string;
  token: string;
  dataDir: string;
  process: ChildProcess;
  /** Graceful stop; removes the data directory unless `keepData`. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** SIGKILL, as in a crash; the data directory is kept. */
  kill(): Promise<void>;
}

export interface StartOptions {
  backend?: Backend;
  dataDir?: string;
  env?: Record<string, string>;
  args?: string[];
}

export async function startHub(options: StartOptions = {}): Promise<HubProcess> {
  const backend = options.backend ?? 'sqlite';
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'hub-test-'));
  const child = spawn(process.execPath, [MAIN, '--port', '0', '--data-dir', dataDir, ...(options.args ?? [])], {
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
    backend, url, token: ADMIN_TOKEN, dataDir, process: child,
    async stop(stopOptions = {}) {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      if (!stopOptions.keepData) rmSync(dataDir, { recursive: true, force: true });
    },
    async kill() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
