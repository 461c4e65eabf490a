// What bounds one read in both engines: the database time it may take, and its client going away.
import { StorageError } from '../storage-error.js';

export interface ReadBounds {
  /** The database time the read may take in all, in ms; 0 for no deadline. */
  deadlineMs: number;
  /** Aborts when the client of the read went away. */
  signal?: AbortSignal;
}

/** A read whose client went away stops like one cancelled in the database (PostgreSQL reports both as query_canceled). */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new StorageError('timeout', 'the client went away');
}

/** Fails a read whose statements together took longer than the deadline (checked once each has finished). */
export function checkDeadline(spentMs: number, bounds: ReadBounds): void {
  if (bounds.deadlineMs > 0 && spentMs > bounds.deadlineMs) {
    throw new StorageError('timeout', `the read took more than ${bounds.deadlineMs} ms in the database`);
  }
}
