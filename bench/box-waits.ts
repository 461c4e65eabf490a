// What each timed small box waited for (`bench --probe`): the hub probe's records beside the machine's counters around the box and the bench's own GC pauses.
import { readFileSync } from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import type { ProbeDump, ProbedRequest } from './probe-records.js';

/** /proc counts in USER_HZ ticks, 100 per second. */
const MS_PER_TICK = 10;

export interface MachineCounters {
  /** Time the hypervisor ran something else while this VM wanted a CPU (/proc/stat steal), all CPUs. */
  stealMs: number;
  /** Busy time of every CPU (user, nice, system, irq, softirq). */
  busyMs: number;
  /** /proc/pressure/cpu "some": time at least one runnable task waited for a CPU; undefined without PSI. */
  pressureMs?: number;
  /** Runnable tasks right now (/proc/loadavg). */
  running: number;
  /** CPU time of this process (the bench: the client, its timers, the idle floor worker). */
  benchMs: number;
  /** The database server's processes (a postmaster's live children), when the engine has one. */
  database?: ServerCounters;
}

export interface ServerCounters {
  cpuMs: number;
  /** Page faults: a backend reading a shared buffer it has not touched before maps its pages one fault at a time. */
  faults: number;
}

/**
 * The live children of a postmaster: its backends, checkpointer, WAL writer, autovacuum. Read from the kernel's
 * children list, as scanning all of /proc between two boxes would cost the machine more than the boxes.
 */
function serverCounters(postmasterPid: number): ServerCounters {
  let cpuTicks = 0;
  let faults = 0;
  let children: string[];
  try {
    children = readFileSync(`/proc/${postmasterPid}/task/${postmasterPid}/children`, 'utf8').trim().split(' ').filter(Boolean);
  } catch {
    return { cpuMs: 0, faults: 0 };
  }
  for (const pid of [String(postmasterPid), ...children]) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // Ended between the two reads.
    }
    // Fields from the third on: minflt is field 10, majflt 12, utime and stime 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    faults += fields[7] + fields[9];
    cpuTicks += fields[11] + fields[12];
  }
  return { cpuMs: cpuTicks * MS_PER_TICK, faults };
}

export function machineCounters(postmasterPid?: number): MachineCounters {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n')[0].trim().split(/\s+/).map(Number);
  const running = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3].split('/')[0]);
  let pressureMs: number | undefined;
  try {
    pressureMs = Number(/^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]) / 1000;
  } catch {
    pressureMs = undefined;
  }
  const { user: benchUser, system: benchSystem } = process.cpuUsage();
  return {
    stealMs: steal * MS_PER_TICK, busyMs: (user + nice + system + irq + softirq) * MS_PER_TICK, pressureMs, running,
    benchMs: (benchUser + benchSystem) / 1000, database: postmasterPid === undefined ? undefined : serverCounters(postmasterPid),
  };
}

/** One timed box as the bench saw it. */
export interface BoxTiming {
  label: string;
  /** ms since the epoch, on the clock the probe uses (performance.timeOrigin based). */
  start: number;
  latencyMs: number;
  /** Features in the answer. */
  features: number;
  before: MachineCounters;
  after: MachineCounters;
}

/** The bench process's own GC pauses while it times boxes: they count in a box's latency, not in the hub's time. */
export function watchOwnPauses(): { stop(): { at: number; ms: number }[] } {
  const pauses: { at: number; ms: number }[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ at: performance.timeOrigin + entry.startTime, ms: entry.duration });
  });
  observer.observe({ entryTypes: ['gc'] });
  return { stop: () => { observer.disconnect(); return pauses; } };
}

export interface BoxWait {
  label: string;
  latencyMs: number;
  features: number;
  hub?: ProbedRequest;
  /** The hub's GC pauses within the box's latency (the request handler's time or around it: reading the request, writing the answer). */
  hubGcMs: number;
  benchGcMs: number;
  stealMs: number;
  /** The database server's CPU and page faults over the box, when it has a server. */
  database?: ServerCounters;
  benchMs: number;
  /** CPU time of the whole machine over the box beyond the hub's, the database's and the bench's: other people's work. */
  othersMs: number;
  pressureMs?: number;
  running: number;
}

const overlapping = (pauses: { at: number; ms: number }[], start: number, end: number) =>
  pauses.filter((pause) => pause.at < end && pause.at + pause.ms > start).reduce((sum, pause) => sum + pause.ms, 0);

export function boxWaits(boxes: BoxTiming[], dumps: ProbeDump[], benchPauses: { at: number; ms: number }[]): BoxWait[] {
  const byLabel = new Map<string, { request: ProbedRequest; dump: ProbeDump }>();
  for (const dump of dumps) for (const request of dump.requests) byLabel.set(request.label, { request, dump });
  return boxes.map((box) => {
    const found = byLabel.get(box.label);
    const end = box.start + box.latencyMs;
    const busyMs = box.after.busyMs - box.before.busyMs;
    const database = box.after.database && box.before.database
      ? { cpuMs: box.after.database.cpuMs - box.before.database.cpuMs, faults: box.after.database.faults - box.before.database.faults } : undefined;
    const benchMs = box.after.benchMs - box.before.benchMs;
    return {
      label: box.label, latencyMs: box.latencyMs, features: box.features, hub: found?.request,
      hubGcMs: found ? overlapping(found.dump.pauses, box.start, end) : 0,
      benchGcMs: overlapping(benchPauses, box.start, end),
      stealMs: box.after.stealMs - box.before.stealMs, database, benchMs,
      othersMs: Math.max(0, busyMs - (found?.request.cpuMs ?? 0) - (database?.cpuMs ?? 0) - benchMs),
      pressureMs: box.after.pressureMs === undefined || box.before.pressureMs === undefined ? undefined : box.after.pressureMs - box.before.pressureMs,
      running: box.after.running,
    };
  });
}

const fixed = (value: number | undefined) => (value === undefined ? '' : value.toFixed(1));

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * fraction) - 1)];
}

/** The same box read again later: by the hub in a second pass, and by the plain floor in its first and second pass. */
export interface BoxAgain {
  hubAgainMs: number;
  floorMs: number;
  floorAgainMs: number;
}

/**
 * The hub's own time per box at p50 and p99 beside the bench's latency, then the slowest boxes one by one, each with
 * its latency when read again and the plain floor's for it: a box slow again is slow for its data, a box slow once
 * was slow for its moment. The counters from /proc are in 10 ms ticks: a box of a few ms shows 0 or 10.
 */
export function waitsTable(waits: BoxWait[], slowest: number, again: (label: string) => BoxAgain | undefined): string[][] {
  const probed = waits.filter((wait) => wait.hub);
  const spread = (values: number[]) => `${fixed(percentile(values, 0.5))} / ${fixed(percentile(values, 0.99))}`;
  const hubOf = (wait: BoxWait) => wait.hub as ProbedRequest;
  const calm = probed.filter((wait) => wait.stealMs === 0 && wait.hubGcMs === 0 && wait.benchGcMs === 0);
  const columns: { name: string; spread?: (wait: BoxWait) => number; box: (wait: BoxWait, repeat?: BoxAgain) => string }[] = [
    { name: 'features', box: (wait) => String(wait.features) },
    { name: 'latency ms', spread: (wait) => wait.latencyMs, box: (wait) => fixed(wait.latencyMs) },
    { name: 'again ms', box: (_, repeat) => fixed(repeat?.hubAgainMs) },
    { name: 'floor ms (again)', box: (_, repeat) => (repeat ? `${fixed(repeat.floorMs)} (${fixed(repeat.floorAgainMs)})` : '') },
    { name: 'hub handler ms', spread: (wait) => hubOf(wait).end - hubOf(wait).start, box: (wait) => fixed(wait.hub && wait.hub.end - wait.hub.start) },
    { name: 'hub CPU ms', spread: (wait) => hubOf(wait).cpuMs, box: (wait) => fixed(wait.hub?.cpuMs) },
    { name: 'statements ms', spread: (wait) => hubOf(wait).statementMs, box: (wait) => (wait.hub ? `${fixed(wait.hub.statementMs)} (${wait.hub.statements})` : '') },
    { name: 'hub GC ms', box: (wait) => fixed(wait.hubGcMs) },
    { name: 'bench GC ms', box: (wait) => fixed(wait.benchGcMs) },
    { name: 'hub faults', box: (wait) => String(wait.hub?.faults ?? '') },
    { name: 'preempted', box: (wait) => String(wait.hub?.preempted ?? '') },
    { name: 'database CPU ms', box: (wait) => fixed(wait.database?.cpuMs) },
    { name: 'database faults', spread: (wait) => wait.database?.faults ?? 0, box: (wait) => String(wait.database?.faults ?? '') },
    { name: 'bench CPU ms', box: (wait) => fixed(wait.benchMs) },
    { name: 'steal ms', box: (wait) => String(wait.stealMs) },
    { name: 'others\' CPU ms', box: (wait) => fixed(wait.othersMs) },
    { name: 'CPU pressure ms', box: (wait) => fixed(wait.pressureMs) },
    { name: 'runnable', box: (wait) => String(wait.running) },
  ];
  const lines = [
    ['box', ...columns.map((column) => column.name)],
    ['p50 / p99', ...columns.map((column) => (column.spread ? spread(probed.map(column.spread)) : ''))],
    [`p50 / p99 of the ${calm.length} boxes without steal or GC`, ...columns.map((column) => (column.name === 'latency ms' ? spread(calm.map((wait) => wait.latencyMs)) : ''))],
  ];
  for (const wait of [...waits].sort((a, b) => b.latencyMs - a.latencyMs).slice(0, slowest)) {
    const repeat = again(wait.label);
    lines.push([wait.label, ...columns.map((column) => column.box(wait, repeat))]);
  }
  return lines;
}
