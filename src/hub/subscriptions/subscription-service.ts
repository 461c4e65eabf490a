// Webhook subscriptions of a space as the API serves them (docs/subscriptions.md): create (the secret answered once), list, read, replace, delete.
import { randomBytes } from 'node:crypto';
import { hubError } from '../../core/errors.js';
import { isObject } from '../../core/json.js';
import type { Storage, StoredSpace, SubscriptionRecord, SubscriptionState } from '../../storage/storage.js';
import type { Claims } from '../access/claims.js';
import type { SpaceResolver } from '../resolve/space-resolver.js';
import { randomId } from '../ids.js';
import { keepsHistory } from '../versions/space-versions.js';
import { checkReachable, destinationUrl } from './destination-guard.js';
import { filterSpecOf } from './subscription-filter.js';
import { SUBSCRIPTION_TYPES, type SubscriptionType } from './version-bodies.js';

/** Each subscription is polled and delivered separately: a space keeps a handful, not thousands. */
export const MAX_SUBSCRIPTIONS_PER_SPACE = 100;

export interface SubscriptionSettings {
  /** HUB_ALLOW_PRIVATE_WEBHOOKS: destinations on loopback, private and link-local addresses are allowed. */
  allowPrivate: boolean;
  /** HUB_SUBSCRIPTION_MAX_LAG: the most versions a subscription may fall behind HEAD while pinning its history. */
  maxLag: number;
}

/** A subscription as the API shows it; the secret is never part of it. */
export type SubscriptionView = Record<string, unknown>;

interface SubscriptionInput {
  id?: string;
  destination: string;
  type: SubscriptionType;
  filter: string | null;
  state?: SubscriptionState;
}

const refuse = (problem: string): never => { throw hubError('invalidSubscription', { problem }); };

const isSubscriptionId = (id: string) => /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(id);

const TOP_MEMBERS = ['id', 'source', 'destination', 'config', 'filter', 'status'];

/** A POST or PUT body: the members above, each checked; 400 naming the first one that is wrong. */
async function inputOf(body: Record<string, unknown>, spaceId: string, allowPrivate: boolean): Promise<SubscriptionInput> {
  const unknown = Object.keys(body).filter((key) => !TOP_MEMBERS.includes(key));
  if (unknown.length > 0) refuse(`unknown members ${unknown.slice(0, 5).map((key) => JSON.stringify(key.slice(0, 40))).join(', ')}; known: ${TOP_MEMBERS.join(', ')}`);
  const { id, source, config, filter, status } = body;
  if (id !== undefined && (typeof id !== 'string' || !isSubscriptionId(id))) {
    refuse('id must be 1 to 64 letters, digits, "_", "." or "-", starting with a letter or digit');
  }
  if (source !== undefined && source !== spaceId) refuse('source, when given, must be the id of the space in the path');
  if (!isObject(config)) return refuse(`config must be an object with a type: ${SUBSCRIPTION_TYPES.join(', ')}`);
  const { type } = config;
  if (typeof type !== 'string' || !(SUBSCRIPTION_TYPES as readonly string[]).includes(type)) refuse(`config.type must be one of ${SUBSCRIPTION_TYPES.join(', ')}`);
  let state: SubscriptionState | undefined;
  if (status !== undefined) {
    if (!isObject(status) || (status.state !== undefined && status.state !== 'ACTIVE' && status.state !== 'SUSPENDED')) {
      refuse('status.state must be ACTIVE or SUSPENDED (the rest of status is the hub\'s and not taken)');
    }
    state = (status as { state?: SubscriptionState }).state;
  }
  const url = destinationUrl(body.destination);
  await checkReachable(url, allowPrivate);
  const spec = filterSpecOf(filter);
  return { id: id as string | undefined, destination: url.href, type: type as SubscriptionType, filter: spec ? JSON.stringify(spec) : null, state };
}

export class SubscriptionService {
  constructor(private readonly storage: Storage, private readonly spaces: SpaceResolver, private readonly settings: SubscriptionSettings) {}

  /** The space once the caller may do this to its subscriptions (SpaceScope.subscriptions). */
  private async space(caller: Claims, spaceId: string, sends: boolean): Promise<StoredSpace> {
    const scope = await this.spaces.open(caller, spaceId, () => { throw hubError('spaceNotFound'); });
    return scope.subscriptions(sends);
  }

  private async viewOf(space: StoredSpace, record: SubscriptionRecord, head?: number): Promise<SubscriptionView> {
    const current = head ?? (await this.storage.features.versions(space.key)).head;
    const status: Record<string, unknown> = { state: record.state, deliveredVersion: record.delivered, lag: Math.max(0, current - record.delivered), retries: record.attempts };
    if (record.state === 'ACTIVE' && record.retryAt > Date.now()) status.nextAttemptAt = record.retryAt;
    if (record.lastError !== null) status.lastError = record.lastError;
    return {
      id: record.id, source: record.spaceId, destination: record.destination, config: { type: record.type },
      ...(record.filter === null ? {} : { filter: JSON.parse(record.filter) as unknown }), status, createdAt: record.createdAt,
    };
  }

  async list(caller: Claims, spaceId: string): Promise<SubscriptionView[]> {
    const space = await this.space(caller, spaceId, false);
    const { head } = await this.storage.features.versions(space.key);
    return Promise.all((await this.storage.subscriptions.list(space.key.sid)).map((record) => this.viewOf(space, record, head)));
  }

  /** The stored subscription of a path's id; an id no subscription can have is not looked up. */
  private async stored(space: StoredSpace, id: string): Promise<SubscriptionRecord> {
    const record = isSubscriptionId(id) ? await this.storage.subscriptions.get(space.key.sid, id) : undefined;
    if (!record) throw hubError('subscriptionNotFound', { id: id.slice(0, 64) });
    return record;
  }

  async get(caller: Claims, spaceId: string, id: string): Promise<SubscriptionView> {
    const space = await this.space(caller, spaceId, false);
    return this.viewOf(space, await this.stored(space, id));
  }

  /**
   * A new subscription delivers the versions after HEAD as it is now. Its secret (the HMAC key of the signatures) is
   * in this answer only.
   */
  async create(caller: Claims, spaceId: string, body: Record<string, unknown>): Promise<SubscriptionView> {
    const space = await this.space(caller, spaceId, true);
    if (!keepsHistory(space.definition)) throw hubError('subscriptionNeedsHistory');
    const input = await inputOf(body, spaceId, this.settings.allowPrivate);
    const count = (await this.storage.subscriptions.list(space.key.sid)).length;
    if (count >= MAX_SUBSCRIPTIONS_PER_SPACE) throw hubError('tooManySubscriptions', { count });
    const { head } = await this.storage.features.versions(space.key);
    const record: SubscriptionRecord = {
      sid: space.key.sid, spaceId, id: input.id ?? randomId(12), destination: input.destination, type: input.type,
      filter: input.filter, secret: randomBytes(32).toString('base64url'), state: input.state ?? 'ACTIVE', delivered: head, attempts: 0, retryAt: 0,
      lastError: null, createdAt: Date.now(), tokenId: caller.tid,
    };
    if (!(await this.storage.subscriptions.create(record))) throw hubError('subscriptionExists', { id: record.id });
    return { ...(await this.viewOf(space, record, head)), secret: record.secret };
  }

  /**
   * Replaces destination, config and filter, and delivery goes on in the caller's token's name; `status.state` ACTIVE starts the attempts over at once (a SUSPENDED one
   * resumes), SUSPENDED stops delivery. A subscription that fell further behind than the history is pinned for
   * (HUB_SUBSCRIPTION_MAX_LAG), or whose next versions are no longer kept, resumes after what is gone, and says so in lastError.
   */
  async replace(caller: Claims, spaceId: string, id: string, body: Record<string, unknown>): Promise<SubscriptionView> {
    const space = await this.space(caller, spaceId, true);
    const current = await this.stored(space, id);
    if (body.id !== undefined && body.id !== id) refuse('id, when given, must be the id in the path');
    const input = await inputOf(body, spaceId, this.settings.allowPrivate);
    const state = input.state ?? current.state;
    const resume = input.state === 'ACTIVE' ? await this.resumePoint(space, current.delivered) : undefined;
    const updated = await this.storage.subscriptions.update(space.key.sid, id, { destination: input.destination, type: input.type, filter: input.filter, state, tokenId: caller.tid, resume });
    if (!updated) throw hubError('subscriptionNotFound', { id: id.slice(0, 64) });
    return this.viewOf(space, updated);
  }

  private async resumePoint(space: StoredSpace, delivered: number): Promise<{ delivered: number; note: string | null }> {
    if (!keepsHistory(space.definition)) throw hubError('subscriptionNeedsHistory');
    const { head } = await this.storage.features.versions(space.key);
    const from = Math.max(delivered, head - this.settings.maxLag);
    if (from >= head) return { delivered: from, note: null };
    const [next] = await this.storage.history.versionsIn(space.key, { from: from + 1, to: head }, 1);
    const resumed = next ? next.version - 1 : head;
    return resumed === delivered ? { delivered, note: null }
      : { delivered: resumed, note: `Resumed after version ${resumed}: versions ${delivered + 1} to ${resumed} were no longer kept and were not delivered.` };
  }

  async delete(caller: Claims, spaceId: string, id: string): Promise<SubscriptionView> {
    const space = await this.space(caller, spaceId, false);
    const record = await this.stored(space, id);
    if (!(await this.storage.subscriptions.delete(space.key.sid, id))) throw hubError('subscriptionNotFound', { id: id.slice(0, 64) });
    return this.viewOf(space, record);
  }
}
