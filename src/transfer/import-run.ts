// One import: reads the input in order, sends chunks of features to the hub (several in flight), and moves the checkpoint over the acknowledged prefix only.
import { rmSync } from 'node:fs';
import { type Checkpoint, readCheckpoint, writeCheckpoint } from './checkpoint.js';
import { detectFormat, type InputFormat, READERS } from './formats/format-registry.js';
import { HubClient, HubRequestError } from './hub-client.js';
import { openInput } from './input-source.js';
import { Progress } from './progress.js';
import { InputError, type ReaderOptions } from './transfer-feature.js';

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
  /** The features' JSON texts: as read where that says the same (ReadItem.text), else serialized. */
  features: string[];
  failed: number;
  done: boolean;
}

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

  const progress = new Progress({ out: process.stderr, intervalMs: options.progressIntervalMs, totalBytes: input.size });
  const state = { ...start };
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

  /** Moves the checkpoint over the chunks acknowledged without a gap before them: a crash then repeats only later chunks, whose ids overwrite. */
  const acknowledge = () => {
    let moved = false;
    while (pending.length > 0 && pending[0].done) {
      const chunk = pending.shift() as Chunk;
      state.next = chunk.end;
      state.written += chunk.features.length;
      state.failed += chunk.failed;
      moved = true;
    }
    if (moved && checkpointPath !== undefined) writeCheckpoint(checkpointPath, state);
  };
  const send = async (chunk: Chunk) => {
    pending.push(chunk);
    if (chunk.features.length > 0) {
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

  let chunk: Chunk = { start: state.next, end: state.next, features: [], failed: 0, done: false };
  let index = state.next;
  try {
    const read = await READERS[format]();
    for await (const item of read(input.source, { ...options.reader, skip: state.next })) {
      progress.bytes = input.bytesRead();
      index++;
      chunk.end = index;
      if (item.error !== undefined) {
        if (options.onError === 'stop') throw new InputError(`${item.error} (--on-error skip passes over bad records)`, item.position);
        process.stderr.write(`skipped ${item.position}: ${item.error}\n`);
        chunk.failed++;
        progress.failed++;
      } else {
        item.feature.id ??= `${input.fingerprint}-${index - 1}`;
        chunk.features.push(item.text ?? JSON.stringify(item.feature));
      }
      if (chunk.features.length >= options.chunk) {
        await send(chunk);
        chunk = { start: index, end: index, features: [], failed: 0, done: false };
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
