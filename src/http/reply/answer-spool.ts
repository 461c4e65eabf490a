// Where a file-format answer is written before it is sent (its `Link` header needs the page's end): in memory up to a bound, then in a temporary file.
import { createReadStream } from 'node:fs';
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Readable, Writable } from 'node:stream';

/**
 * Bytes held in memory before the answer moves to a file. An iterate page of 5,000 points as a sequence is about
 * 1.3 MB: written to a file and read back, it cost the hub more CPU than writing it (syscalls on the thread pool,
 * 64 KiB reads), so pages of ordinary size stay in memory and only large ones keep memory flat on disk.
 */
const MEMORY_BYTES = 4 * 1024 * 1024;

export class AnswerSpool extends Writable {
  private chunks: Buffer[] = [];
  private size = 0;
  private dir: string | undefined;
  private file: FileHandle | undefined;

  constructor() {
    // Not destroyed when finished: what it holds is sent after that; destroy() is for an answer that failed.
    super({ autoDestroy: false });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (error?: Error | null) => void): void {
    this.size += chunk.length;
    if (this.dir === undefined && this.size <= MEMORY_BYTES) {
      this.chunks.push(chunk);
      done();
      return;
    }
    this.toFile(chunk).then(() => done(), done);
  }

  override _final(done: (error?: Error | null) => void): void {
    if (this.file === undefined) done();
    else this.file.close().then(() => done(), done);
  }

  override _destroy(error: Error | null, done: (error?: Error | null) => void): void {
    const file = this.file;
    (file === undefined ? Promise.resolve() : file.close()).catch(() => {}).then(() => this.discard()).then(() => done(error));
  }

  /** The answer once written: in memory, or a stream of its file that removes the file when it closes. */
  body(): { body: Buffer | Readable; size: number } {
    if (this.dir === undefined) return { body: this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.size), size: this.size };
    const stream = createReadStream(join(this.dir, 'answer'));
    stream.on('close', () => { this.discard().catch(() => {}); });
    return { body: stream, size: this.size };
  }

  /** Removes the file, if there is one (an answer that failed, or one sent). */
  async discard(): Promise<void> {
    const dir = this.dir;
    this.chunks = [];
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  }

  private async toFile(chunk: Buffer): Promise<void> {
    if (this.file === undefined) {
      this.dir = await mkdtemp(join(tmpdir(), 'spatial-hub-answer-'));
      this.file = await open(join(this.dir, 'answer'), 'w');
      const held = this.chunks;
      this.chunks = [];
      for (const piece of held) await this.file.writeFile(piece);
    }
    await this.file.writeFile(chunk);
  }
}
