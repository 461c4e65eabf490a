// Progress of an import or export: a one-line bar on a terminal (features, bytes, features/s, ETA), else one JSON line every interval; then a summary.
export interface ProgressOptions {
  /** stderr's stream; the bar is drawn when it is a terminal. */
  out: NodeJS.WriteStream;
  intervalMs: number;
  /** The input's size when known: then an ETA can be given. */
  totalBytes?: number;
}

const megabytes = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MB`;

export class Progress {
  features = 0;
  bytes = 0;
  failed = 0;
  private readonly started = Date.now();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly options: ProgressOptions) {
    const tty = options.out.isTTY === true;
    this.timer = setInterval(() => (tty ? this.drawBar() : this.jsonLine()), tty ? 250 : options.intervalMs);
    this.timer.unref();
  }

  private snapshot() {
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? this.features / seconds : 0;
    const total = this.options.totalBytes;
    const eta = total !== undefined && this.bytes > 0 && seconds > 0 ? Math.max(0, (total - this.bytes) / (this.bytes / seconds)) : undefined;
    return { features: this.features, failed: this.failed, bytes: this.bytes, totalBytes: total, featuresPerSecond: Math.round(rate), etaSeconds: eta === undefined ? undefined : Math.round(eta), seconds: Math.round(seconds) };
  }

  private drawBar(): void {
    const s = this.snapshot();
    const share = s.totalBytes ? Math.min(1, s.bytes / s.totalBytes) : undefined;
    const bar = share === undefined ? '' : `[${'#'.repeat(Math.round(share * 20)).padEnd(20, '.')}] ${(share * 100).toFixed(0)}% `;
    this.options.out.write(`\r${bar}${s.features} features, ${megabytes(s.bytes)}, ${s.featuresPerSecond}/s${s.etaSeconds === undefined ? '' : `, ETA ${s.etaSeconds}s`}\u001b[K`);
  }

  private jsonLine(): void {
    this.options.out.write(JSON.stringify({ progress: this.snapshot() }) + '\n');
  }

  /** Stops the display and writes the summary: a line of text on a terminal, else JSON. */
  finish(summary: Record<string, unknown>): void {
    clearInterval(this.timer);
    const seconds = Number(((Date.now() - this.started) / 1000).toFixed(3));
    const line = { ...summary, seconds };
    if (this.options.out.isTTY === true) {
      this.options.out.write(`\r\u001b[K${Object.entries(line).map(([key, value]) => `${key}: ${String(value)}`).join(', ')}\n`);
    } else {
      this.options.out.write(JSON.stringify({ summary: line }) + '\n');
    }
  }
}
