// Slows down, then refuses, repeated failed logins for one username; the counts live in the storage, so every node applies them.
import { hubError } from '../../core/errors.js';
import type { SessionStore } from '../../storage/storage.js';

/** Failures are forgotten this long after the last one (and then the username may try again). */
export const FAILURE_WINDOW_MS = 15 * 60_000;
/** From this many failures in a row on, each further attempt waits before it is answered. */
export const SLOW_DOWN_AFTER = 3;
/** At this many failures in a row, attempts are refused with 429 until the window has passed. */
export const REFUSE_AT = 10;
/** The wait grows by this much per failure beyond SLOW_DOWN_AFTER, up to MAX_DELAY_MS. */
const DELAY_STEP_MS = 200;
const MAX_DELAY_MS = 2_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class LoginThrottle {
  constructor(private readonly sessions: SessionStore) {}

  /** Before checking a password: waits when the username failed often, throws 429 when it failed too often. */
  async admit(username: string, now = Date.now()): Promise<void> {
    const failures = await this.sessions.loginFailures(username, now, FAILURE_WINDOW_MS);
    if (failures.count >= REFUSE_AT) {
      const seconds = Math.max(1, Math.ceil((failures.lastAt + FAILURE_WINDOW_MS - now) / 1000));
      throw hubError('tooManyLoginAttempts', { seconds }, { retryAfter: seconds });
    }
    if (failures.count >= SLOW_DOWN_AFTER) await sleep(Math.min(MAX_DELAY_MS, DELAY_STEP_MS * (failures.count - SLOW_DOWN_AFTER + 1)));
  }

  async failed(username: string): Promise<void> {
    await this.sessions.recordLoginFailure(username, Date.now(), FAILURE_WINDOW_MS);
  }

  async succeeded(username: string): Promise<void> {
    await this.sessions.clearLoginFailures(username);
  }
}
