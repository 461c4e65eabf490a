// Opens the input of an import (a file or stdin) with a byte counter, the first bytes for format detection, and a fingerprint for stable ids and checkpoints.
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, openSync, readSync, statSync } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { type InputSource, InputError } from './transfer-feature.js';

const HEAD_BYTES = 1 << 20;

export interface OpenedInput {
  source: InputSource;
  head: Uint8Array;
  /** Hex prefix of sha256(size, first MiB): the same file gives the same derived ids and finds its checkpoint. */
  fingerprint: string;
  size?: number;
  /** Bytes read so far, for progress. */
  bytesRead(): number;
}

const fingerprintOf = (head: Uint8Array, size: number | undefined) =>
  createHash('sha256').update(`${size ?? 'stream'}:`).update(head).digest('hex').slice(0, 12);

export async function openInput(path: string): Promise<OpenedInput> {
  let read = 0;
  const counted = (stream: Readable): Readable => stream.on('data', (chunk: Buffer) => { read += chunk.length; });
  if (path === '-') return openStdin(counted, () => read);
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw new Error('not a regular file');
    size = stat.size;
  } catch (error) {
    throw new InputError(`cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, 'the input');
  }
  const head = Buffer.alloc(Math.min(size, HEAD_BYTES));
  const descriptor = openSync(path, 'r');
  try {
    readSync(descriptor, head, 0, head.length, 0);
  } finally {
    closeSync(descriptor);
  }
  return {
    source: {
      path,
      open: (start = 0) => {
        read = start;
        return counted(createReadStream(path, { highWaterMark: 1 << 16, start }));
      },
    },
    head, fingerprint: fingerprintOf(head, size), size, bytesRead: () => read,
  };
}

/** stdin cannot be read twice: its first bytes are kept and put back in front of the rest. */
async function openStdin(counted: (stream: Readable) => Readable, bytesRead: () => number): Promise<OpenedInput> {
  const chunks: Buffer[] = [];
  let length = 0;
  const stdin = process.stdin;
  const ended = await new Promise<boolean>((resolve) => {
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= 65536) {
        stdin.pause();
        stdin.off('data', onData);
        stdin.off('end', onEnd);
        resolve(false);
      }
    };
    const onEnd = () => resolve(true);
    stdin.on('data', onData);
    stdin.once('end', onEnd);
  });
  const head = Buffer.concat(chunks);
  const open = () => {
    const stream = new PassThrough();
    stream.write(head);
    if (ended) stream.end();
    else stdin.pipe(stream);
    return counted(stream);
  };
  return { source: { open }, head, fingerprint: fingerprintOf(head, undefined), bytesRead };
}
