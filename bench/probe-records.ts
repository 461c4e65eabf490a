// What the hub probe (hub-probe.ts) records per timed request, and how the bench asks for it and reads it back.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';

/** The request header naming a timed request; requests without it are not recorded. */
export const PROBE_HEADER = 'x-bench-probe';
/** Where the probe writes its records: this path with `.<pid>` appended, one file per hub process. */
export const PROBE_FILE_ENV = 'HUB_BENCH_PROBE_FILE';

export interface ProbedRequest {
  label: string;
  /** From the request event to the answer handed to the socket, ms since the epoch (performance.timeOrigin based). */
  start: number;
  end: number;
  /** The hub process's CPU (user + system, all threads) over the request. */
  cpuMs: number;
  /** Time inside the database driver's calls, and how many. */
  statementMs: number;
  statements: number;
  faults: number;
  /** Involuntary context switches: the kernel took the CPU from the process. */
  preempted: number;
}

export interface ProbeDump {
  requests: ProbedRequest[];
  /** Every GC pause of the process (PerformanceObserver 'gc'): start in ms since the epoch, duration, V8's kind (1 scavenge, 4 mark-compact, 8 incremental, 16 weak callbacks). */
  pauses: { at: number; ms: number; kind: number }[];
}

/** The hub's process and its workers (the processes whose parent it is). */
export function hubProcesses(pid: number): number[] {
  const children = readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).filter((entry) => {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
    } catch {
      return false;
    }
  });
  return [pid, ...children.map(Number)];
}

/** Asks every hub process for its records (SIGUSR2) and reads them: one dump per process, each written once. */
export async function collectProbe(file: string, pids: number[]): Promise<ProbeDump[]> {
  for (const pid of pids) process.kill(pid, 'SIGUSR2');
  const mine = () => readdirSync(dirname(file)).filter((name) => name.startsWith(`${basename(file)}.`));
  for (let wait = 0; wait < 50 && mine().length < pids.length; wait++) await new Promise((resolve) => setTimeout(resolve, 100));
  // A dump's file appears when its writer opens it: a short wait lets the last one finish. Removed once read, for the next round.
  await new Promise((resolve) => setTimeout(resolve, 100));
  return mine().map((name) => {
    const path = `${dirname(file)}/${name}`;
    const dump = JSON.parse(readFileSync(path, 'utf8')) as ProbeDump;
    rmSync(path);
    return dump;
  });
}
