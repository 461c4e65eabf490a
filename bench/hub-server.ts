// Starts the built hub as a child process on a free port for the benchmark, and reads its memory from /proc.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { MAIN, startFlags } from '../test/helpers/hub-process.js';

export interface BenchHub {
  /** Origin, e.g. `http://127.0.0.1:41234`. */
  origin: string;
  token: string;
  pid: number;
  dataDir: string;
  /** Graceful stop (SIGTERM), so a CPU profile gets written. */
  stop(): Promise<void>;
}

export interface HubStartOptions {
  dataDir: string;
  env?: Record<string, string>;
  /** Extra Node.js flags for the hub process (e.g. `--cpu-prof`). */
  nodeArgs?: string[];
  /** The admin token, for a second hub on the same storage (a new one would revoke the first hub's). */
  token?: string;
  /** The hub's program: another checkout's build, for a before/after comparison (write-ab.ts); this one's by default. */
  main?: string;
}

export async function startBenchHub(options: HubStartOptions): Promise<BenchHub> {
  const token = options.token ?? 'bench-' + randomBytes(16).toString('hex');
  const child: ChildProcess = spawn(process.execPath, [...startFlags(), ...(options.nodeArgs ?? []), options.main ?? MAIN, '--port', '0', '--data-dir', options.dataDir], {
    // One process unless asked for workers: the figures compare with floors that run on one thread, and the CPU
    // profile (`--profile`) is the one process's. The `workers` section compares the two.
    env: { HUB_WORKERS: '1', ...process.env, HUB_ADMIN_TOKEN: token, HUB_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const origin = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-16_000);
      const match = /Listening on (http:\/\/[^/\s]+)/.exec(output);
      if (match) resolve(match[1]);
    });
    child.stderr?.on('data', (chunk: Buffer) => { output = (output + chunk.toString()).slice(-16_000); });
    child.once('exit', (code) => reject(new Error(`hub exited with ${code} before listening:\n${output}`)));
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', (code, signal) => {
    // A hub gone in the middle of a section shows up in the bench as a broken connection; say why it went.
    if (!stopping) process.stderr.write(`[bench] the hub (pid ${child.pid}) exited with ${signal ?? code} while in use; its last output:\n${output.slice(-4000)}\n`);
    resolve();
  }));
  return {
    origin, token, pid: child.pid as number, dataDir: options.dataDir,
    async stop() {
      stopping = true;
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

export interface MemoryReading {
  rssKiB: number;
  hwmKiB: number;
}

export function readMemory(pid: number): MemoryReading {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssKiB: field('VmRSS'), hwmKiB: field('VmHWM') };
}

/** Resets VmHWM to the current RSS (Linux `clear_refs` 5); false when the kernel does not allow it. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface MemoryWatch {
  /** Stops sampling; returns the highest sampled RSS and the kernel's high-water mark. */
  stop(): MemoryReading;
}

/** Samples the RSS every few milliseconds so short peaks are seen even where VmHWM cannot be reset. */
export function watchMemory(pid: number, everyMs = 20): MemoryWatch {
  let peak = readMemory(pid).rssKiB;
  const timer = setInterval(() => { peak = Math.max(peak, readMemory(pid).rssKiB); }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      const last = readMemory(pid);
      return { rssKiB: Math.max(peak, last.rssKiB), hwmKiB: last.hwmKiB };
    },
  };
}
