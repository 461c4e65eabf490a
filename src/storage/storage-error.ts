// What storage reports as failures, in its own terms; hub/ maps them to the error catalogue.

export type StorageFailure =
  /** The space a feature operation names was deleted after it was looked up. */
  | 'spaceGone'
  /** A space with the id to create exists already; the detail is that id. */
  | 'spaceExists'
  /** An account with the username to create exists already; the detail is that username. */
  | 'accountExists'
  /** The database cannot be reached, or a space's database is no longer configured. */
  | 'unavailable'
  /** A statement or a lock wait ran past its deadline and was cancelled. */
  | 'timeout'
  /** One write named spaces in different databases, which no transaction spans; the detail is the other space's database. */
  | 'crossDatabase'
  /** A job's write whose node no longer holds the job's lease, or whose job is no longer RUNNING (JobFence): nothing was written. */
  | 'leaseLost';

export class StorageError extends Error {
  constructor(readonly failure: StorageFailure, readonly detail = '') {
    super(detail === '' ? failure : `${failure}: ${detail}`);
  }
}
