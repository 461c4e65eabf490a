// The files of jobs under HUB_JOBS_DIR: each job's uploaded input and written output, streamed to disk and never held in memory.
import { once } from 'node:events';
import { createReadStream, createWriteStream, type ReadStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** A file stream once its file is open: a failed open rejects here instead of being an 'error' event no one listens to. */
async function opened(path: string): Promise<Writable> {
  const stream = createWriteStream(path, { mode: 0o600 });
  await once(stream, 'open');
  return stream;
}

/**
 * Flushes a file, or a directory's entries, to the disk. A kill -9 loses nothing the OS was given, a power loss can:
 * the job row that names a file is committed durably (fsync), so the file it names must be on the disk first.
 */
async function flushToDisk(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Renames a complete file into place durably: its content, then the directory entry, and the job folder's own entry. */
async function renameDurably(from: string, to: string): Promise<void> {
  await flushToDisk(from);
  await rename(from, to);
  await flushToDisk(dirname(to));
  await flushToDisk(dirname(dirname(to)));
}

export class JobFiles {
  constructor(readonly dir: string) {}

  private folder(id: string): string {
    return join(this.dir, id);
  }

  inputPath(id: string): string {
    return join(this.folder(id), 'input');
  }

  outputPath(id: string): string {
    return join(this.folder(id), 'output');
  }

  /**
   * Streams an upload into a part file, which becomes the input only once complete: a broken upload leaves the last one.
   * The body is opened only once the pipeline takes it: a body failing before (a bad gzip, a client gone) while the
   * folder was made emitted its error with no one listening, which stopped the process.
   */
  async receive(id: string, open: () => Readable): Promise<number> {
    await mkdir(this.folder(id), { recursive: true, mode: 0o700 });
    const part = `${this.inputPath(id)}.part`;
    try {
      await pipeline(open(), createWriteStream(part, { mode: 0o600 }));
    } catch (error) {
      await rm(part, { force: true });
      throw error;
    }
    await renameDurably(part, this.inputPath(id));
    return (await stat(this.inputPath(id))).size;
  }

  /** The output being written; `finishOutput` makes it the job's output. */
  async openOutput(id: string): Promise<Writable> {
    await mkdir(this.folder(id), { recursive: true, mode: 0o700 });
    return opened(`${this.outputPath(id)}.part`);
  }

  async finishOutput(id: string): Promise<void> {
    await renameDurably(`${this.outputPath(id)}.part`, this.outputPath(id));
  }

  private partsPath(id: string): string {
    return join(this.folder(id), 'outputs');
  }

  /** Starts the parts of a partitioned export afresh: a resumed export writes them all again. */
  async resetParts(id: string): Promise<void> {
    await rm(`${this.partsPath(id)}.part`, { recursive: true, force: true });
    await mkdir(`${this.partsPath(id)}.part`, { recursive: true, mode: 0o700 });
  }

  /** One part being written; `finishParts` makes the parts the job's outputs, all at once. */
  async openPart(id: string, name: string): Promise<Writable> {
    return opened(join(`${this.partsPath(id)}.part`, name));
  }

  async finishParts(id: string): Promise<void> {
    const written = `${this.partsPath(id)}.part`;
    for (const name of await readdir(written)) await flushToDisk(join(written, name));
    await rm(this.partsPath(id), { recursive: true, force: true });
    await renameDurably(written, this.partsPath(id));
  }

  /** The parts in order with their sizes; empty when there are none (they were removed). */
  async listParts(id: string): Promise<Array<{ name: string; bytes: number }>> {
    let names: string[];
    try {
      names = (await readdir(this.partsPath(id))).sort();
    } catch {
      return [];
    }
    return Promise.all(names.map(async (name) => ({ name, bytes: (await stat(join(this.partsPath(id), name))).size })));
  }

  /** One part by a name from `listParts` (never a path: the caller's name is only compared with the listed ones). */
  async readPart(id: string, name: string): Promise<{ stream: ReadStream; bytes: number } | undefined> {
    const part = (await this.listParts(id)).find((listed) => listed.name === name);
    return part && { stream: createReadStream(join(this.partsPath(id), part.name)), bytes: part.bytes };
  }

  /** The output and its size; undefined when there is none (it was removed). */
  async readOutput(id: string): Promise<{ stream: ReadStream; bytes: number } | undefined> {
    try {
      const { size } = await stat(this.outputPath(id));
      return { stream: createReadStream(this.outputPath(id)), bytes: size };
    } catch {
      return undefined;
    }
  }

  async remove(id: string): Promise<void> {
    await rm(this.folder(id), { recursive: true, force: true });
  }
}
