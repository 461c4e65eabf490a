// Bounds the lines of a line-based input (GeoJSONSeq, CSV) that a job reads: a reader holds a whole line in memory, so one endless line could exhaust the hub's.
import { Transform, type TransformCallback } from 'node:stream';
import { InputError, type InputSource } from '../../transfer/transfer-feature.js';

/** The longest line a job reads when HUB_MAX_BODY sets no limit. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

class LineLimit extends Transform {
  private line = 0;
  private lines = 1;

  constructor(private readonly limit: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    for (let start = 0; ;) {
      const end = chunk.indexOf(10, start);
      if (end === -1) {
        this.line += chunk.length - start;
        break;
      }
      this.line = 0;
      this.lines++;
      start = end + 1;
    }
    if (this.line > this.limit) return callback(new InputError(`a line longer than ${this.limit} bytes; no feature is that large`, `line ${this.lines}`));
    callback(null, chunk);
  }
}

/** The same input, failing with an InputError at a line longer than `limit` bytes. */
export function withLineLimit(source: InputSource, limit: number): InputSource {
  return {
    path: source.path,
    open: (start) => {
      const stream = source.open(start);
      const limited = new LineLimit(limit);
      stream.on('error', (error) => limited.destroy(error));
      return stream.pipe(limited);
    },
  };
}
