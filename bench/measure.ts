// Timing helpers shared by the benchmark's HTTP side and its floors.
import type { FeatureRow, FeatureTextPage } from '../src/core/feature-query.js';

export interface Rate {
  items: number;
  seconds: number;
}

/** CPU seconds spent during a timed window by the process that served it and, on PostgreSQL, by the database server. */
export interface CpuSpent {
  process: number;
  database?: number;
}

/** A rate with the requests it took and the CPU they cost, so that a figure can be read as CPU per request. */
export interface Measured extends Rate {
  requests: number;
  cpu: CpuSpent;
}

const now = () => performance.now() / 1000;
export const perSecond = (rate: Rate) => rate.items / rate.seconds;
/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[Math.floor(middle)];
}
export const fastest = <T extends Rate>(runs: T[]): T => runs.reduce((best, run) => (perSecond(run) > perSecond(best) ? run : best));

export async function timed(work: () => Promise<number>): Promise<Rate> {
  const start = now();
  const items = await work();
  return { items, seconds: now() - start };
}

/** Runs `work` (returning how many items it handled) again and again for at least `seconds` and `minRuns` runs. */
export async function repeated(seconds: number, minRuns: number, work: () => Promise<number>): Promise<Rate> {
  const start = now();
  let items = 0;
  for (let runs = 0; runs < minRuns || now() - start < seconds; runs++) items += await work();
  return { items, seconds: now() - start };
}

/** Walks the ids in a scattered but complete order, so consecutive reads do not hit neighbouring rows. */
export function rotation(ids: string[]): () => string {
  const stride = 7919;
  let position = 0;
  return () => {
    position = (position + stride) % ids.length;
    return ids[position];
  };
}

/** Consumes a query as the read path does: every row, with its text. */
export async function drain(pages: AsyncIterable<FeatureRow[]>): Promise<{ count: number; lastSeq: number; characters: number }> {
  let count = 0;
  let lastSeq = 0;
  let characters = 0;
  for await (const rows of pages) {
    for (const row of rows) {
      count++;
      lastSeq = row.seq;
      characters += row.json.length;
    }
  }
  return { count, lastSeq, characters };
}

/** Consumes a query as the read path does when it transforms nothing: the database's joined page texts. */
export async function drainText(pages: AsyncIterable<FeatureTextPage>): Promise<{ count: number; lastSeq: number; bytes: number }> {
  let count = 0;
  let lastSeq = 0;
  let bytes = 0;
  for await (const page of pages) {
    count += page.count;
    lastSeq = page.lastSeq;
    bytes += page.text.length;
  }
  return { count, lastSeq, bytes };
}
