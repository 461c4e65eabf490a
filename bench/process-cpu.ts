// CPU time from /proc of the processes a timed window involves: the hub and its workers, the PostgreSQL server, the benchmark itself.
import { readdirSync, readFileSync } from 'node:fs';
import type { CpuSpent, Rate } from './measure.js';

/** /proc counts CPU time in USER_HZ ticks, 100 per second on Linux. */
const TICKS_PER_SECOND = 100;

/** Indexes into the fields after the command name: field 4 (ppid), 14-15 (utime, stime), 16-17 (cutime, cstime). */
const PPID = 1;
const UTIME = 11;
const STIME = 12;
const CHILDREN_UTIME = 13;
const CHILDREN_STIME = 14;

/** The fields of /proc/<pid>/stat from field 3 on, or undefined when the process has ended. */
function statFields(pid: number): string[] | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis start with field 3.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

const ticks = (fields: string[], ...indexes: number[]) => indexes.reduce((sum, index) => sum + Number(fields[index]), 0);

/**
 * CPU seconds (user and system, all threads) a process and the processes it started have used so far: itself, each
 * child that still runs (a hub's workers; a PostgreSQL postmaster's backends, autovacuum, checkpointer, WAL writer),
 * and those that ended, which the kernel adds to the parent's children's time when it reaps them. Backends come and
 * go with connections, so a sum over the live ones alone would lose the work of one that ended within the window.
 */
export function readCpuSeconds(pid: number): number {
  const parent = statFields(pid);
  if (!parent) throw new Error(`no process ${pid}`);
  let total = ticks(parent, UTIME, STIME, CHILDREN_UTIME, CHILDREN_STIME);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(Number(entry));
    if (fields && Number(fields[PPID]) === pid) total += ticks(fields, UTIME, STIME);
  }
  return total / TICKS_PER_SECOND;
}

/**
 * CPU seconds every process of the machine has used so far (the busy fields of /proc/stat's first line: user, nice,
 * system, irq, softirq, steal). On a shared machine, what a window used beyond the processes measured tells how much
 * others took from it.
 */
export function machineCpuSeconds(): number {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
  return (user + nice + system + irq + softirq + steal) / TICKS_PER_SECOND;
}

/** CPU seconds of this process (every thread, so the floor worker's too). */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

/**
 * Starts a CPU window: `served` reads the CPU seconds of the process doing the work (the hub, or the benchmark
 * process for a floor), and with a postmaster the database server's are read too. The returned function ends it.
 */
export function cpuWindow(served: () => number, postmasterPid?: number): () => CpuSpent {
  const database = () => (postmasterPid === undefined ? undefined : readCpuSeconds(postmasterPid));
  const processStart = served();
  const databaseStart = database();
  return () => {
    const processEnd = served();
    const databaseEnd = database();
    return {
      process: processEnd - processStart,
      ...(databaseStart === undefined || databaseEnd === undefined ? {} : { database: databaseEnd - databaseStart }),
    };
  };
}

/** Runs `work` inside a CPU window (see cpuWindow) and adds what it cost to its rate. */
export async function withCpu<T extends Rate & { requests: number }>(served: () => number, postmasterPid: number | undefined,
  work: () => Promise<T>): Promise<T & { cpu: CpuSpent }> {
  const stop = cpuWindow(served, postmasterPid);
  const rate = await work();
  return { ...rate, cpu: stop() };
}
