// An output buffer that grows as bytes are appended: a streamed answer built from slices of its input without making strings.

/** Runs shorter than this are copied by a loop. */
const SHORT_COPY = 512;

export class ByteWriter {
  private buffer: Buffer;
  private used = 0;

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(capacity, 256));
  }

  get length(): number {
    return this.used;
  }

  private room(bytes: number): void {
    if (this.used + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(2 * this.buffer.length, this.used + bytes));
    this.buffer.copy(grown, 0, 0, this.used);
    this.buffer = grown;
  }

  /** Appends `source[start, end)`; short runs byte by byte, as a view and a native copy cost more than they move. */
  copy(source: Uint8Array, start: number, end: number): void {
    const length = end - start;
    this.room(length);
    if (length < SHORT_COPY) {
      const target = this.buffer;
      for (let from = start, to = this.used; from < end; from++, to++) target[to] = source[from];
    } else {
      this.buffer.set(source.subarray(start, end), this.used);
    }
    this.used += length;
  }

  /** Appends text as UTF-8. */
  text(text: string): void {
    this.room(3 * text.length);
    this.used += this.buffer.write(text, this.used);
  }

  /** Drops what was appended after `length`. */
  truncate(length: number): void {
    this.used = Math.min(this.used, length);
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.used);
  }
}
