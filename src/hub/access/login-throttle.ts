// Slows down, then refuses, repeated failed logins for one username; the counts live in the storage, so every node applies them.
import { hubError } from '../../core/errors.js';
import type { SessionStore } from '../../storage/storage.js';

/** Failures are forgotten this long after the last attempt (and then the username may try again). */
const FAILURE_WINDOW_MS = 15 * 60_000;
/** From this many failures in a row on, each further attempt waits before it is answered. */
const SLOW_DOWN_AFTER = 3;
/** After this many failures in a row, attempts are refused with 429 until the window has passed. */
const REFUSE_AFTER = 10;
/** The wait grows by this much per failure beyond SLOW_DOWN_AFTER, up to MAX_DELAY_MS. */
const DELAY_STEP_MS = 200;
const MAX_DELAY_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class LoginThrottle {
  constructor(private readonly sessions: SessionStore) {}

  /**
   * Before checking a password: counts the attempt as a failure until it succeeds, in one storage statement, so
   * that parallel attempts (on any node) cannot get past the limit together. Waits when the username failed often;
   * throws 429 when it failed too often (a refused attempt counts too, so the refusal lasts while attempts go on).
   */
  async attempt(username: string): Promise<void> {
    const now = Date.now();
    const failures = await this.sessions.recordLoginFailure(username, now, FAILURE_WINDOW_MS);
    const before = failures.count - 1;
    if (before >= REFUSE_AFTER) {
      const seconds = Math.ceil(FAILURE_WINDOW_MS / 1000);
      throw hubError('tooManyLoginAttempts', { seconds }, { retryAfter: seconds });
    }
    if (before >= SLOW_DOWN_AFTER) await sleep(Math.min(MAX_DELAY_MS, DELAY_STEP_MS * (before - SLOW_DOWN_AFTER + 1)));
  }

  async succeeded(username: string): Promise<void> {
    await this.sessions.clearLoginFailures(username);
  }
}
