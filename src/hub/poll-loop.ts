// The timer loop of work that goes on after requests (subscription delivery, jobs): one poll at a time, every pollMs, until stopped.

export class PollLoop {
  private readonly stopping = new AbortController();
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;

  /** `onError` is told of a poll that failed; the next one comes at its time all the same. */
  constructor(private readonly pollMs: number, private readonly poll: () => Promise<void>, private readonly onError?: (error: unknown) => void) {}

  /** Aborted once `stop` was called: work started by a poll ends early on it. */
  get stopped(): AbortSignal {
    return this.stopping.signal;
  }

  start(): void {
    this.schedule();
  }

  /** No poll starts after this call; resolves once the poll in progress, if any, has ended. */
  async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.stopping.abort();
    await this.polling;
  }

  private schedule(): void {
    if (this.stopping.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.polling = this.poll().catch((error: unknown) => this.onError?.(error)).finally(() => this.schedule());
    }, this.pollMs);
  }
}
