// Coalesced strict lookups: a DataLoader schedule under which one batch per kind of lookup is in flight, and lookups arriving meanwhile share the next one, never it.
/**
 * DataLoader only ever adds a lookup to a batch not yet sent, so a lookup's statement always starts after the lookup
 * was asked for: its snapshot is never older than the request (a write acknowledged on any node before the request
 * came is seen). This schedule adds that a batch is sent only once the previous one of the same kind has answered:
 * under load, the lookups that arrive during one round trip wait for the next, and one statement serves them all
 * instead of one statement each (docs/cache-and-changed-tiles.md, fourth look). A lone lookup waits for nothing but
 * the end of the event loop's round (setImmediate), as before.
 */
export class StrictBatches {
  /** The batch in flight, settled (never rejected) when it has answered. */
  private inFlight: Promise<void> = Promise.resolve();

  /** DataLoader's `batchScheduleFn`: sends the batch after the one in flight has answered. */
  readonly schedule = (send: () => void): void => {
    void this.inFlight.then(() => setImmediate(send));
  };

  /** Wraps a batch's work (DataLoader's batch function), so that the next batch waits for it. */
  run<T>(work: () => Promise<T>): Promise<T> {
    const answer = work();
    this.inFlight = answer.then(() => undefined, () => undefined);
    return answer;
  }
}
