// The event stream of a space (GET /hub/spaces/{id}/events, docs/events.md): checks what a stream asks for, then hands out its feed.
import { hubError } from '../../core/errors.js';
import type { Storage } from '../../storage/storage.js';
import type { AccessService } from '../access/access-service.js';
import type { Claims } from '../access/claims.js';
import { expiryOf } from '../access/token-claims.js';
import type { SpaceChanges } from '../changes/space-changes.js';
import type { HistoryService } from '../versions/history-service.js';
import { type EventFilter, featureMatcher } from './event-filter.js';
import { EventFeed, type FeedTimers } from './event-feed.js';

/** The heartbeat; a load balancer closing idle connections after 30 s or more keeps the stream. */
export const DEFAULT_HEARTBEAT_MS = 15_000;
/** The safety net under the change signal: a missed signal delays an event by at most this much. */
export const DEFAULT_CHECK_MS = 1_000;
/** What a stream may hold unsent before it waits for its client (docs/events.md). */
export const DEFAULT_EVENT_BUFFER = 1024 * 1024;
/** A client whose stream waited this long for it to take anything is disconnected with the version to resume from. */
export const DEFAULT_EVENT_STALL_MS = 10_000;

export interface EventRequest {
  /** Resume after this version (Last-Event-ID or ?since=); −1 for every kept version; absent: from HEAD on. */
  since?: number;
  filter: EventFilter;
}

/** `bufferBytes` of a stream may wait unsent for its client; a client that takes nothing for `stallMs` then is cut off. */
export interface StreamLimits {
  bufferBytes: number;
  stallMs: number;
}

export class EventService {
  constructor(private readonly storage: Storage, private readonly history: HistoryService, private readonly access: AccessService,
    private readonly changes: SpaceChanges, private readonly timers: FeedTimers, readonly limits: StreamLimits) {}

  get bufferBytes(): number {
    return this.limits.bufferBytes;
  }

  get stallMs(): number {
    return this.limits.stallMs;
  }

  /**
   * The feed of the space's versions after `since` for a caller who may read its features, of a space keeping
   * history: the events are its changesets. A 4xx before the stream starts: rights, a layered space
   * (historyOfLayers), a space keeping one version (noHistory), a version after HEAD, a bad filter.
   */
  async open(caller: Claims, spaceId: string, request: EventRequest): Promise<EventFeed> {
    const open = () => this.history.history(caller, spaceId, false);
    const source = await open();
    const matcher = featureMatcher(request.filter);
    const { head } = await source.versions();
    const since = request.since ?? head;
    if (since > head) throw hubError('invalidParameter', { name: 'since', problem: `version ${since} is after HEAD (${head}): resume from a version the space has written` });
    return new EventFeed(source, since, matcher, {
      open,
      history: this.storage.history,
      listen: (space, listener) => this.changes.listen(space, listener),
      onRevocation: (listener) => this.access.onRevocation(listener),
      tokenAlive: () => this.access.stillValid(caller),
      tokenExpiresAt: expiryOf(caller),
    }, this.timers);
  }
}
