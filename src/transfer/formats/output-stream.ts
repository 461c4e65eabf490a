// Writing to an output stream with back-pressure, shared by the writers; a batch gathers small pieces into one write.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { FeatureText } from '../transfer-feature.js';

export async function put(out: Writable, chunk: string | Uint8Array): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** Bytes gathered before a batch writes them: one write (and one buffer) per feature costs more than the feature's copy. */
const BATCH_BYTES = 256 * 1024;

/**
 * Copies small pieces (a feature's text, its line end) into one buffer and writes it when full. add() is synchronous;
 * the writer awaits settle() once per feature, which waits only when the output asked to (back-pressure).
 */
export class OutputBatch {
  private buffer = Buffer.allocUnsafe(BATCH_BYTES);
  private size = 0;
  private full = false;

  constructor(private readonly out: Writable) {}

  add(source: Uint8Array, start = 0, end = source.length): void {
    const length = end - start;
    if (this.size + length > this.buffer.length) this.writeOut();
    if (length > this.buffer.length) {
      if (!this.out.write(source.subarray(start, end))) this.full = true;
      return;
    }
    this.buffer.set(start === 0 && end === source.length ? source : source.subarray(start, end), this.size);
    this.size += length;
  }

  /** One byte (a line feed, a record separator), without a buffer for it. */
  addByte(byte: number): void {
    if (this.size === this.buffer.length) this.writeOut();
    this.buffer[this.size++] = byte;
  }

  /** A feature text: its bytes without the cut-out namespace, copied without a view per piece (Buffer.copy, not set of a subarray). */
  addText(text: FeatureText): void {
    const length = text.cutFrom - text.start + text.end - text.cutTo;
    if (this.size + length > this.buffer.length) this.writeOut();
    if (length > this.buffer.length) {
      this.add(text.bytes, text.start, text.cutFrom);
      this.add(text.bytes, text.cutTo, text.end);
      return;
    }
    this.size += text.bytes.copy(this.buffer, this.size, text.start, text.cutFrom);
    this.size += text.bytes.copy(this.buffer, this.size, text.cutTo, text.end);
  }

  async settle(): Promise<void> {
    if (!this.full) return;
    this.full = false;
    await once(this.out, 'drain');
  }

  async flush(): Promise<void> {
    this.writeOut();
    await this.settle();
  }

  private writeOut(): void {
    if (this.size === 0) return;
    const chunk = this.buffer.subarray(0, this.size);
    this.buffer = Buffer.allocUnsafe(BATCH_BYTES);
    this.size = 0;
    if (!this.out.write(chunk)) this.full = true;
  }
}
