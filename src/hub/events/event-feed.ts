// One client's event stream of one space: each committed version in order, from where the client was, with heartbeats; it ends when the caller may no longer read.
import { HubError } from '../../core/errors.js';
import type { HistoryStore, SpaceKey, VersionRecord } from '../../storage/storage.js';
import { CLAIMS_TTL_MS } from '../access/claims-cache.js';
import type { FeatureSource } from '../feature-source.js';
import { ChangeCursor, CHANGE_KINDS, VersionPages } from '../versions/changeset-stream.js';
import { oldestReadable } from '../versions/space-versions.js';
import type { FeatureMatcher } from './event-filter.js';
import { ChangesetEvent, disconnectEvent, HEARTBEAT, resetEvent } from './event-text.js';

export interface FeedTimers {
  /** A heartbeat comment this often (ms). */
  heartbeatMs: number;
  /** The space, the caller's right to read it and its versions are looked at this often (ms), signal or not. */
  checkMs: number;
}

/** What a feed needs of the hub: opening the space's history as the caller (rights decided again), and hearing of changes. */
export interface FeedSources {
  open(): Promise<FeatureSource>;
  history: HistoryStore;
  /** Calls back on each version committed to the space; returns the call that stops it. */
  listen(space: SpaceKey, listener: (version: number) => void): () => void;
  /** Calls back when some token was deleted; returns the call that stops it. */
  onRevocation(listener: () => void): () => void;
  /** Whether the caller's token still exists. */
  tokenAlive(): Promise<boolean>;
  /** When the caller's token expires (ms since the epoch), if it does: the stream ends then. */
  tokenExpiresAt?: number;
}

/** The longest delay a Node timer takes (about 24.8 days); a later expiry is waited for in steps of this. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The stream's text, pulled by the HTTP layer as fast as the client takes it: nothing is read from the storage
 * while a piece waits to be sent, so a feed holds at most one piece of one version. `last` is the last version
 * whose event was handed out whole; `atBoundary` says whether the text handed out so far ends between events.
 */
export class EventFeed implements AsyncIterable<string> {
  last: number;
  atBoundary = true;
  private closed = false;
  private wake: () => void = () => undefined;
  private heartbeatDue = false;
  private checkDue = false;
  private tokenCheckDue = false;
  private expired = false;
  private signalled = false;
  private source: FeatureSource;
  private readonly stops: Array<() => void> = [];

  constructor(first: FeatureSource, since: number, private readonly matcher: FeatureMatcher | undefined, private readonly sources: FeedSources,
    private readonly timers: FeedTimers) {
    this.source = first;
    this.last = since;
  }

  /** Ends the feed (the client went away); the storage is not read again. */
  close(): void {
    this.closed = true;
    for (const stop of this.stops.splice(0)) stop();
    this.wake();
  }

  /** The event ending a stream whose client cannot keep up. */
  slowConsumer(): string {
    return disconnectEvent('slowConsumer', this.last, `The client did not read the stream fast enough. Resume after version ${this.last} (Last-Event-ID or ?since=${this.last}).`);
  }

  private start(): void {
    const poke = (set: () => void) => () => { set(); this.wake(); };
    this.stops.push(this.sources.listen(this.source.space.key, (version) => { if (version > this.last) poke(() => { this.signalled = true; })(); }));
    this.stops.push(this.sources.onRevocation(poke(() => { this.tokenCheckDue = true; })));
    const heartbeat = setInterval(poke(() => { this.heartbeatDue = true; }), this.timers.heartbeatMs);
    let checks = 0;
    const check = setInterval(poke(() => {
      this.checkDue = true;
      // A deletion this node did not hear of (another process on the same SQLite file, a lost listener) ends the
      // stream within the time a token stays cached anyway.
      if (++checks % Math.max(1, Math.round(CLAIMS_TTL_MS / this.timers.checkMs)) === 0) this.tokenCheckDue = true;
    }), this.timers.checkMs);
    this.stops.push(() => clearInterval(heartbeat), () => clearInterval(check));
    const { tokenExpiresAt } = this.sources;
    if (tokenExpiresAt !== undefined) this.expireAt(tokenExpiresAt, poke(() => { this.expired = true; }));
  }

  /** Calls `expire` at the time `at`: a timer, so the stream ends when the token does, not at the next look. */
  private expireAt(at: number, expire: () => void): void {
    const wait = at - Date.now();
    const timer = setTimeout(() => {
      if (this.closed) return;
      if (wait > MAX_TIMER_MS) this.expireAt(at, expire);
      else expire();
    }, Math.max(0, Math.min(wait, MAX_TIMER_MS)));
    this.stops.push(() => clearTimeout(timer));
  }

  async *[Symbol.asyncIterator](): AsyncIterator<string> {
    this.start();
    try {
      // A comment first: the client sees the stream open (and its headers) before the first version comes.
      yield HEARTBEAT;
      while (!this.closed) {
        // HEAD before the rights: every version up to it was committed before they are decided again, so a write made
        // after the space was unshared (or its packages narrowed) is never sent on a decision from before that change.
        const versions = await this.source.versions();
        const ended = await this.recheck(versions.head > this.last);
        if (ended) {
          yield ended;
          return;
        }
        if (versions.head > this.last) {
          const oldest = oldestReadable(this.source.space.definition, versions);
          if (this.last + 1 < oldest) yield* this.reset(versions.head, oldest);
          else yield* this.versionsUpTo(versions.head);
          // A version committed after that read of HEAD signals as it commits, so HEAD is read again only when something is
          // due: reading it after every batch made one statement more per wake-up on each node.
          if (this.lookDue) continue;
        }
        // Asleep until a signal or a look is due; a heartbeat alone reads nothing.
        for (await this.sleep(); !this.closed && !this.lookDue; await this.sleep()) {
          this.heartbeatDue = false;
          yield HEARTBEAT;
        }
      }
    } finally {
      this.close();
    }
  }

  /** Whether the space, its versions or the token are to be looked at. */
  private get lookDue(): boolean {
    return this.signalled || this.checkDue || this.tokenCheckDue || this.expired;
  }

  /** Until something is due or the feed closes. */
  private sleep(): Promise<void> {
    if (this.lookDue || this.heartbeatDue || this.closed) return Promise.resolve();
    return new Promise((resolve) => { this.wake = () => { this.wake = () => undefined; resolve(); }; });
  }

  /**
   * The disconnect event when the stream must end: the token expired or was deleted, or the space can no longer be
   * streamed to the caller. The space and the caller's right to read it are looked at again before any version is
   * sent (`sending`), not only every `checkMs`: the signal of a write can come before that look.
   */
  private async recheck(sending: boolean): Promise<string | undefined> {
    this.signalled = false;
    if (this.expired) {
      const at = new Date(this.sources.tokenExpiresAt ?? Date.now()).toISOString();
      return disconnectEvent('tokenExpired', this.last, `The token of this stream expired at ${at}.`);
    }
    if (this.tokenCheckDue) {
      this.tokenCheckDue = false;
      if (!(await this.sources.tokenAlive())) return disconnectEvent('unauthorized', this.last, 'The token of this stream was deleted.');
    }
    if (!this.checkDue && !sending) return undefined;
    this.checkDue = false;
    try {
      this.source = await this.sources.open();
      return undefined;
    } catch (error) {
      if (!(error instanceof HubError) || error.status >= 500) throw error;
      return disconnectEvent(error.code, this.last, error.message);
    }
  }

  private *reset(head: number, oldest: number): Iterable<string> {
    this.last = head;
    yield resetEvent(head, oldest);
  }

  /** The events of the versions after `last` up to `head`, read from the history a page at a time, in order. */
  private async *versionsUpTo(head: number): AsyncIterable<string> {
    const { key, definition } = this.source.space;
    const from = this.last + 1;
    const versions = new VersionPages(this.sources.history, key, { from, to: head });
    const cursors = CHANGE_KINDS.map((kind) => new ChangeCursor(this.sources.history, key, kind, { version: from, seq: 0 }, head));
    const replaced = this.matcher && new ChangeCursor(this.sources.history, key, 'replaced', { version: from, seq: 0 }, head);
    // An expired token stops a replay between events; the stream then ends (recheck).
    for (let record = await versions.peek(); record && !this.closed && !this.expired; record = await versions.peek()) {
      versions.take();
      if (record.version !== this.last + 1) {
        // Pruned between the look at the versions and this read.
        const current = await this.source.versions();
        yield* this.reset(current.head, oldestReadable(definition, current));
        return;
      }
      yield* this.event(record, cursors, replaced);
    }
  }

  private async *event(record: VersionRecord, cursors: ChangeCursor[], replaced: ChangeCursor | undefined): AsyncIterable<string> {
    const { version } = record;
    const event = new ChangesetEvent(record);
    this.atBoundary = false;
    for (let kind = 0; kind < cursors.length; kind++) {
      for (let row = await cursors[kind].peek(version); row; row = await cursors[kind].peek(version)) {
        cursors[kind].take();
        if (!this.matcher || this.matcher(row.json) || (kind === 1 && replaced && (await this.matchedBefore(replaced, version, row.seq)))) {
          event.add(kind, row.json);
        }
        const piece = event.piece();
        if (piece) yield piece;
      }
    }
    const rest = event.finish(!this.matcher);
    this.last = version;
    this.atBoundary = true;
    yield rest;
  }

  /** Whether the state an update at `version` wrote over (same seq) matched: the cursor walks the replaced states in seq order. */
  private async matchedBefore(replaced: ChangeCursor, version: number, seq: number): Promise<boolean> {
    for (let row = await replaced.peek(version); row && row.seq <= seq; row = await replaced.peek(version)) {
      replaced.take();
      if (row.seq === seq) return this.matcher?.(row.json) ?? true;
    }
    return false;
  }
}
