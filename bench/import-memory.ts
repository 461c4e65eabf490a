// The hub's memory through a long import: the RSS peak from /proc, when it came, and what V8 held then (GET /metrics), to tell garbage from native memory.
import { readFileSync } from 'node:fs';
import type { HubClient } from './http.js';

const MIB = 1024 * 1024;

interface HeapSample {
  /** Seconds since the watch began. */
  at: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
}

export interface ImportMemory {
  /** Highest sampled RSS, with its anonymous and file-backed parts, in bytes. */
  peakRss: number;
  peakAnon: number;
  peakFile: number;
  /** Seconds into the watch at which the peak was sampled. */
  peakAt: number;
  /** The kernel's high-water mark (VmHWM) at the end, bytes. */
  hwm: number;
  /** The last heap sample taken at or before the peak. */
  heapAtPeak?: HeapSample;
  /** The highest V8 heap total and external memory over the whole watch, bytes. */
  maxHeapTotal: number;
  maxExternal: number;
  samples: number;
}

function status(pid: number): { rss: number; anon: number; file: number; hwm: number } {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN) * 1024;
  return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile'), hwm: kib('VmHWM') };
}

/** One gauge of prom-client's default metrics from the exposition text (no labels). */
function gauge(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
}

/**
 * Samples the RSS every `rssEveryMs` and the hub's V8 heap (`process.memoryUsage()` through GET /metrics, which the
 * bench's loopback client may read) every `heapEveryMs`. A peak far above the heap's total is native memory; a heap
 * total near the peak is V8's garbage between mark-compacts (docs/import-export.md, "The hub's memory during an import").
 */
export function watchImportMemory(pid: number, client: HubClient, rssEveryMs = 200, heapEveryMs = 1000) {
  const began = performance.now();
  const seconds = () => (performance.now() - began) / 1000;
  const first = status(pid);
  const memory: ImportMemory = { peakRss: first.rss, peakAnon: first.anon, peakFile: first.file, peakAt: 0, hwm: first.hwm, maxHeapTotal: 0, maxExternal: 0, samples: 0 };
  let lastHeap: HeapSample | undefined;
  const rssTimer = setInterval(() => {
    const now = status(pid);
    if (now.rss > memory.peakRss) Object.assign(memory, { peakRss: now.rss, peakAnon: now.anon, peakFile: now.file, peakAt: seconds(), heapAtPeak: lastHeap });
  }, rssEveryMs);
  let asking = false;
  const heapTimer = setInterval(() => {
    if (asking) return;
    asking = true;
    client.request('GET', '/metrics').then(({ status: code, body }) => {
      if (code !== 200) return;
      const text = body.toString();
      lastHeap = { at: seconds(), heapTotal: gauge(text, 'nodejs_heap_size_total_bytes'), heapUsed: gauge(text, 'nodejs_heap_size_used_bytes'), external: gauge(text, 'nodejs_external_memory_bytes') };
      memory.maxHeapTotal = Math.max(memory.maxHeapTotal, lastHeap.heapTotal);
      memory.maxExternal = Math.max(memory.maxExternal, lastHeap.external);
      memory.samples++;
    }, () => undefined).finally(() => { asking = false; });
  }, heapEveryMs);
  return {
    stop(): ImportMemory {
      clearInterval(rssTimer);
      clearInterval(heapTimer);
      const last = status(pid);
      if (last.rss > memory.peakRss) Object.assign(memory, { peakRss: last.rss, peakAnon: last.anon, peakFile: last.file, peakAt: seconds(), heapAtPeak: lastHeap });
      memory.hwm = last.hwm;
      return memory;
    },
  };
}

/** The figures as one phrase of the bench's note. */
export function describeImportMemory(memory: ImportMemory, rssAfter: number): string {
  const mib = (bytes: number) => `${(bytes / MIB).toFixed(0)} MiB`;
  const heap = memory.heapAtPeak
    ? `; V8 at ${memory.heapAtPeak.at.toFixed(0)} s: heap ${mib(memory.heapAtPeak.heapTotal)} (used ${mib(memory.heapAtPeak.heapUsed)}), external ${mib(memory.heapAtPeak.external)}`
    : '';
  return `hub peak RSS ${mib(memory.peakRss)} at ${memory.peakAt.toFixed(0)} s (anonymous ${mib(memory.peakAnon)}, file ${mib(memory.peakFile)}${heap}; `
    + `most over the import: heap ${mib(memory.maxHeapTotal)}, external ${mib(memory.maxExternal)}, ${memory.samples} samples; VmHWM ${mib(memory.hwm)}, now ${mib(rssAfter)})`;
}
