// One import: reads the input in order, sends chunks of features to the hub (several in flight), moves the checkpoint over the acknowledged prefix only and names there the chunks sent past it.
import { rmSync } from 'node:fs';
import { type Checkpoint, readCheckpoint, type SentChunk, writeCheckpoint } from './checkpoint.js';
import { detectFormat, type InputFormat, READERS } from './formats/format-registry.js';
import { HubClient, HubRequestError } from './hub-client.js';
import { openInput } from './input-source.js';
import { Progress } from './progress.js';
import { committedChunks, propertiesDigest } from './sent-chunks.js';
import { InputError, type ReaderOptions, type ResumePoint } from './transfer-feature.js';

export interface ImportOptions {
  input: string;
  space: string;
  /** Title of the space to create when it does not exist. */
  create?: string;
  format?: InputFormat;
  reader: ReaderOptions;
  tags?: string;
  chunk: number;
  parallel: number;
  onError: 'skip' | 'stop';
  resume: boolean;
  checkpoint?: string;
  progressIntervalMs: number;
  client: HubClient;
}

export interface ImportResult {
  written: number;
  failed: number;
  /** 0 done, 1 the hub failed, 2 bad input or refused by the hub, 130 interrupted. */
  exitCode: number;
  message?: string;
}

interface Chunk {
  /** Item indexes [start, end) of the input this chunk covers, skipped records included. */
  start: number;
  end: number;
  /** Where the input stands after its last item, when the reader says. */
  at?: ResumePoint;
  /** The features' JSON texts: as read where that says the same (ReadItem.text), else serialized. */
  features: string[];
  /** Features it holds: those of `features` once sent, or those of a chunk a killed run sent and the hub committed. */
  written: number;
  failed: number;
  done: boolean;
  /** The last feature's id and properties (their digest once sent), and the hub's clock when it was sent: what a resumed run asks the hub about. */
  lastId?: string;
  lastProperties?: Record<string, unknown>;
  lastDigest?: string;
  sentAfter?: number;
}

const newChunk = (start: number): Chunk => ({ start, end: start, features: [], written: 0, failed: 0, done: false });

/** A chunk as the checkpoint names it. */
const sentChunk = (chunk: Chunk): SentChunk => ({
  start: chunk.start, end: chunk.end, ...(chunk.at === undefined ? {} : { at: chunk.at }), features: chunk.written, failed: chunk.failed, acknowledged: chunk.done,
  ...(chunk.lastDigest === undefined ? {} : { lastId: chunk.lastId, lastDigest: chunk.lastDigest, sentAfter: chunk.sentAfter }),
});

/** Beside the input unless --checkpoint says where; stdin has none unless given. */
export const checkpointPathOf = (options: ImportOptions): string | undefined =>
  options.checkpoint ?? (options.input === '-' ? undefined : `${options.input}.spatial-hub-checkpoint.json`);

/** Creates the space when asked and it is missing; else checks it exists, so that a typo stops the load before any read. */
async function ensureSpace(options: ImportOptions): Promise<void> {
  const path = `/hub/spaces/${encodeURIComponent(options.space)}`;
  try {
    await options.client.request('GET', path);
  } catch (error) {
    if (!(error instanceof HubRequestError) || error.status !== 404 || options.create === undefined) throw error;
    await options.client.request('POST', '/hub/spaces', JSON.stringify({ id: options.space, title: options.create }), { 'content-type': 'application/json' });
  }
}

export async function runImport(options: ImportOptions): Promise<ImportResult> {
  const checkpointPath = checkpointPathOf(options);
  if (options.resume && checkpointPath === undefined) {
    return { written: 0, failed: 0, exitCode: 2, message: '--resume needs a file (or --checkpoint): stdin has no place for a checkpoint beside it' };
  }
  const input = await openInput(options.input);
  const format = options.format ?? detectFormat(options.input === '-' ? undefined : options.input, input.head);
  if (format === undefined) return { written: 0, failed: 0, exitCode: 2, message: `cannot tell the format of ${options.input}: give --format` };
  const fingerprint = `${input.size ?? 'stdin'}:${input.fingerprint}`;
  let start: Checkpoint = { input: fingerprint, space: options.space, next: 0, written: 0, failed: 0 };
  if (options.resume && checkpointPath !== undefined) {
    const saved = readCheckpoint(checkpointPath);
    if (saved && (saved.input !== fingerprint || saved.space !== options.space)) {
      return { written: 0, failed: 0, exitCode: 2, message: `the checkpoint ${checkpointPath} belongs to another input or space; remove it to start over` };
    }
    if (saved) start = saved;
  }
  await ensureSpace(options);
  const committed = await committedChunks(options.client, options.space, start.sent ?? []);

  const progress = new Progress({ out: process.stderr, intervalMs: options.progressIntervalMs, totalBytes: input.size });
  const state: Checkpoint = { input: start.input, space: start.space, next: start.next, at: start.at, written: start.written, failed: start.failed };
  progress.features = state.written;
  progress.failed = state.failed;
  const pending: Chunk[] = [];
  const inFlight = new Set<Promise<void>>();
  let failure: ImportResult | undefined;
  let interrupted = false;
  const interrupt = () => { interrupted = true; };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const write = `/hub/spaces/${encodeURIComponent(options.space)}/features${options.tags ? `?addTags=${encodeURIComponent(options.tags)}` : ''}`;

  /** The checkpoint with the chunks sent past `next`, so that a resumed run can ask which of them the hub committed. */
  const save = () => {
    if (checkpointPath !== undefined) writeCheckpoint(checkpointPath, { ...state, sent: pending.map(sentChunk) });
  };
  /** Moves the checkpoint over the chunks acknowledged without a gap before them; one acknowledged behind a gap is marked so. */
  const acknowledge = () => {
    while (pending.length > 0 && pending[0].done) {
      const chunk = pending.shift() as Chunk;
      state.next = chunk.end;
      // An empty chunk (the last, at the input's end) leaves the place where it stands.
      if (chunk.end > chunk.start) state.at = chunk.at;
      state.written += chunk.written;
      state.failed += chunk.failed;
    }
    save();
  };
  const send = async (chunk: Chunk) => {
    pending.push(chunk);
    chunk.written = chunk.features.length;
    if (chunk.features.length > 0) {
      chunk.sentAfter = options.client.hubClock;
      chunk.lastDigest = propertiesDigest(chunk.lastProperties);
      // Named in the checkpoint before the request leaves: a kill after it leaves must not forget it was sent.
      save();
      const body = `{"type":"FeatureCollection","features":[${chunk.features.join(',')}]}`;
      const task = options.client.request('PUT', write, body, { accept: 'application/x-empty' }).then(() => {
        chunk.done = true;
        progress.features += chunk.features.length;
        acknowledge();
      }, (error: unknown) => {
        failure ??= {
          written: 0, failed: 0, exitCode: error instanceof HubRequestError && error.status !== undefined && error.status < 500 ? 2 : 1,
          message: `items ${chunk.start}..${chunk.end - 1}: ${(error as Error).message}`,
        };
      }).finally(() => inFlight.delete(task));
      inFlight.add(task);
    } else {
      chunk.done = true;
      acknowledge();
    }
    while (inFlight.size >= options.parallel) await Promise.race(inFlight);
  };

  /** A chunk the killed run sent and the hub committed counts as acknowledged, and its items are not sent again. */
  const passOver = (range: SentChunk) => {
    pending.push({ ...newChunk(range.start), end: range.end, at: range.at, written: range.features, failed: range.failed, done: true });
    progress.features += range.features;
    progress.failed += range.failed;
    acknowledge();
  };
  // Those right after `next` (the usual case: the chunks in flight at a kill were all committed) move it: the reader skips them as it skips what comes before.
  while (committed.length > 0 && committed[0].start === state.next) passOver(committed.shift() as SentChunk);
  let chunk = newChunk(state.next);
  let index = state.next;
  try {
    const read = await READERS[format]();
    for await (const item of read(input.source, { ...options.reader, skip: state.next, from: state.at })) {
      progress.bytes = input.bytesRead();
      const range = committed[0];
      if (range !== undefined && index >= range.start) {
        // Behind a chunk sent again: its items are read and dropped.
        if (index === range.start && chunk.end > chunk.start) await send(chunk);
        if (++index >= range.end) {
          passOver(committed.shift() as SentChunk);
          chunk = newChunk(index);
        }
        continue;
      }
      index++;
      chunk.end = index;
      chunk.at = item.at;
      if (item.error !== undefined) {
        if (options.onError === 'stop') throw new InputError(`${item.error} (--on-error skip passes over bad records)`, item.position);
        process.stderr.write(`skipped ${item.position}: ${item.error}\n`);
        chunk.failed++;
        progress.failed++;
      } else {
        item.feature.id ??= `${input.fingerprint}-${index - 1}`;
        chunk.features.push(item.text ?? JSON.stringify(item.feature));
        chunk.lastId = item.feature.id;
        chunk.lastProperties = item.feature.properties;
      }
      if (chunk.features.length >= options.chunk) {
        await send(chunk);
        chunk = newChunk(index);
      }
      if (failure || interrupted) break;
    }
    if (!failure && !interrupted) await send(chunk);
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    failure ??= { written: 0, failed: 0, exitCode: 2, message: error.message };
  } finally {
    await Promise.allSettled(inFlight);
    process.off('SIGINT', interrupt);
    process.off('SIGTERM', interrupt);
  }
  const result: ImportResult = failure ?? (interrupted
    ? { written: 0, failed: 0, exitCode: 130, message: `interrupted: run again with --resume to continue from item ${state.next}` }
    : { written: 0, failed: 0, exitCode: 0 });
  result.written = state.written;
  result.failed = state.failed + (result.exitCode === 0 ? 0 : chunk.failed);
  if (result.exitCode === 0 && checkpointPath !== undefined) rmSync(checkpointPath, { force: true });
  progress.bytes = input.bytesRead();
  progress.finish({ format, written: result.written, failed: result.failed, retries: options.client.retried, startedFrom: start.next, ...(result.exitCode === 0 ? {} : { resumeFrom: state.next }) });
  return result;
}
