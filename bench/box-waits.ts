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
}

export function machineCounters(): MachineCounters {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n')[0].trim().split(/\s+/).map(Number);
  const running = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[3].split('/')[0]);
  let pressureMs: number | undefined;
  try {
    pressureMs = Number(/^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'))?.[1]) / 1000;
  } catch {
    pressureMs = undefined;
  }
  return { stealMs: steal * MS_PER_TICK, busyMs: (user + nice + system + irq + softirq) * MS_PER_TICK, pressureMs, running };
}

/** One timed box as the bench saw it. */
export interface BoxTiming {
  label: string;
  /** ms since the epoch, on the clock the probe uses (performance.timeOrigin based). */
  start: number;
  latencyMs: number;
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
  hub?: ProbedRequest;
  /** The hub's GC pauses within the box's latency (the request handler's time or around it: reading the request, writing the answer). */
  hubGcMs: number;
  benchGcMs: number;
  stealMs: number;
  /** CPU time of the whole machine over the box beyond the hub's: the bench, the database, other people's work. */
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
    return {
      label: box.label, latencyMs: box.latencyMs, hub: found?.request,
      hubGcMs: found ? overlapping(found.dump.pauses, box.start, end) : 0,
      benchGcMs: overlapping(benchPauses, box.start, end),
      stealMs: box.after.stealMs - box.before.stealMs,
      othersMs: Math.max(0, busyMs - (found?.request.cpuMs ?? 0)),
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

/**
 * The hub's own time per box at p50 and p99 beside the bench's latency, then the slowest boxes one by one. The
 * counters from /proc are in 10 ms ticks: a box of a few ms shows 0 or 10.
 */
export function waitsTable(waits: BoxWait[], slowest: number): string[][] {
  const probed = waits.filter((wait) => wait.hub);
  const column = (read: (wait: BoxWait) => number) => `${fixed(percentile(probed.map(read), 0.5))} / ${fixed(percentile(probed.map(read), 0.99))}`;
  const calm = probed.filter((wait) => wait.stealMs === 0 && wait.hubGcMs === 0 && wait.benchGcMs === 0);
  const lines = [
    ['box', 'latency ms', 'hub handler ms', 'hub CPU ms', 'statements ms', 'hub GC ms', 'bench GC ms', 'faults', 'preempted', 'steal ms', 'others\' CPU ms', 'CPU pressure ms', 'runnable'],
    ['p50 / p99', column((wait) => wait.latencyMs), column((wait) => (wait.hub as ProbedRequest).end - (wait.hub as ProbedRequest).start),
      column((wait) => (wait.hub as ProbedRequest).cpuMs), column((wait) => (wait.hub as ProbedRequest).statementMs), '', '', '', '', '', '', '', ''],
    [`p50 / p99 of the ${calm.length} boxes without steal or GC`, `${fixed(percentile(calm.map((wait) => wait.latencyMs), 0.5))} / ${fixed(percentile(calm.map((wait) => wait.latencyMs), 0.99))}`,
      '', '', '', '', '', '', '', '', '', '', ''],
  ];
  for (const wait of [...waits].sort((a, b) => b.latencyMs - a.latencyMs).slice(0, slowest)) {
    const hub = wait.hub;
    lines.push([wait.label, fixed(wait.latencyMs), fixed(hub && hub.end - hub.start), fixed(hub?.cpuMs), hub ? `${fixed(hub.statementMs)} (${hub.statements})` : '',
      fixed(wait.hubGcMs), fixed(wait.benchGcMs), String(hub?.faults ?? ''), String(hub?.preempted ?? ''), String(wait.stealMs), fixed(wait.othersMs), fixed(wait.pressureMs), String(wait.running)]);
  }
  return lines;
}
