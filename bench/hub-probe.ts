// Loaded into the bench's hub (`node --import`) by `bench --probe`: what each timed request of the hub waited for (its CPU, its statements, GC pauses, page faults, preemptions).
import { writeFileSync } from 'node:fs';
import { type IncomingMessage, Server, type ServerResponse } from 'node:http';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import pg from 'pg';
import { PROBE_FILE_ENV, PROBE_HEADER, type ProbeDump, type ProbedRequest } from './probe-records.js';

const file = process.env[PROBE_FILE_ENV];
const now = () => performance.timeOrigin + performance.now();
const requests: ProbedRequest[] = [];
const pauses: ProbeDump['pauses'] = [];
let statementMs = 0;
let statements = 0;

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) pauses.push({ at: performance.timeOrigin + entry.startTime, ms: entry.duration, kind: (entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0 });
}).observe({ entryTypes: ['gc'] });

type Method = (this: unknown, ...args: unknown[]) => unknown;

/**
 * The statement's time is the drivers' calls: the storage layer has no hook for it, and a probe that only the bench
 * loads must not add one to the hub. better-sqlite3 runs a statement inside get/all/run (iterate steps are timed one
 * by one); pg's query resolves, or calls back, when the answer has arrived.
 */
function timeSqlite(): void {
  const memory = new Database(':memory:');
  const prototype = Object.getPrototypeOf(memory.prepare('SELECT 1')) as Record<string, Method>;
  memory.close();
  for (const name of ['get', 'all', 'run']) {
    const original = prototype[name];
    prototype[name] = function (...args) {
      const start = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        statementMs += performance.now() - start;
        statements++;
      }
    };
  }
  const iterate = prototype.iterate;
  prototype.iterate = function* (...args: unknown[]) {
    const rows = iterate.apply(this, args) as Iterator<unknown>;
    for (;;) {
      const start = performance.now();
      const step = rows.next();
      statementMs += performance.now() - start;
      if (step.done) break;
      yield step.value;
    }
    statements++;
  } as Method;
}

function timePostgres(): void {
  const prototype = pg.Client.prototype as unknown as Record<string, Method>;
  const query = prototype.query;
  prototype.query = function (...args) {
    const start = performance.now();
    const done = () => { statementMs += performance.now() - start; statements++; };
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (...results: unknown[]) => { done(); return (callback as Method).apply(this, results); };
      return query.apply(this, args);
    }
    const result = query.apply(this, args);
    if (result instanceof Promise) result.then(done, done);
    return result;
  };
}

timeSqlite();
timePostgres();

const emit = Server.prototype.emit;
Server.prototype.emit = function (this: Server, event: string | symbol, ...args: unknown[]) {
  if (event === 'request') {
    const [request, response] = args as [IncomingMessage, ServerResponse];
    const label = request.headers[PROBE_HEADER];
    if (typeof label === 'string') {
      const start = now();
      const usage = process.resourceUsage();
      const statementStart = statementMs;
      const statementCount = statements;
      response.once('finish', () => {
        const end = process.resourceUsage();
        requests.push({
          label, start, end: now(), cpuMs: (end.userCPUTime + end.systemCPUTime - usage.userCPUTime - usage.systemCPUTime) / 1000,
          statementMs: statementMs - statementStart, statements: statements - statementCount,
          faults: end.minorPageFault + end.majorPageFault - usage.minorPageFault - usage.majorPageFault,
          preempted: end.involuntaryContextSwitches - usage.involuntaryContextSwitches,
        });
      });
    }
  }
  return emit.apply(this, [event, ...args] as Parameters<typeof emit>);
};

// The bench asks for the records when its timed requests are done, so writing them costs no timed request anything.
process.on('SIGUSR2', () => {
  if (file) writeFileSync(`${file}.${process.pid}`, JSON.stringify({ requests, pauses } satisfies ProbeDump));
  requests.length = 0;
  pauses.length = 0;
});
