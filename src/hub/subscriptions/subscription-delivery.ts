// The delivery loop (docs/subscriptions.md): each node delivers the subscriptions whose lease it holds, version after version, at least once and in order.
import { randomUUID } from 'node:crypto';
import type { Storage, StoredSpace, SubscriptionRecord } from '../../storage/storage.js';
import { allows, subscriptionAccess } from '../access/authorization.js';
import type { Claims } from '../access/claims.js';
import { PollLoop } from '../poll-loop.js';
import { DEFAULT_MAX_PINNED } from '../versions/pruning.js';
import { keepsHistory } from '../versions/space-versions.js';
import { FeatureFilter, type FilterSpec } from './subscription-filter.js';
import { versionBodies } from './version-bodies.js';
import { postWebhook, signatureOf } from './webhook-post.js';

export interface DeliveryOptions {
  /** HUB_SUBSCRIPTION_POLL: how often the node looks for new versions (and renews its leases), in ms. */
  pollMs: number;
  /** HUB_SUBSCRIPTION_LEASE: how long a lease lasts unless renewed; a crashed node's subscriptions move on after it. */
  leaseMs: number;
  /** HUB_SUBSCRIPTION_RETRIES: failed attempts in a row after which a subscription is SUSPENDED. */
  retries: number;
  /** HUB_SUBSCRIPTION_BACKOFF: the wait after the first failure, doubled after each further one up to MAX_BACKOFF_MS. */
  backoffMs: number;
  /** HUB_WEBHOOK_TIMEOUT: how long one POST may take, in ms. */
  timeoutMs: number;
  allowPrivate: boolean;
  maxLag: number;
  /** Told of a round that failed on the storage (it is tried again at the next poll). */
  onError?: (error: unknown) => void;
}

export const DEFAULT_DELIVERY: Omit<DeliveryOptions, 'onError'> = {
  pollMs: 500, leaseMs: 30_000, retries: 10, backoffMs: 1000, timeoutMs: 10_000, allowPrivate: false, maxLag: DEFAULT_MAX_PINNED,
};

const MAX_BACKOFF_MS = 5 * 60_000;
/** Subscriptions one node takes per poll. */
const CLAIMED_PER_POLL = 100;
/** Versions read per storage query; a subscription goes on with the next ones in the same round. */
const VERSIONS_PER_READ = 100;

/** Where delivery learns what a subscription's token may do now: AccessService.claimsOfToken. */
export interface TokenClaims {
  claimsOfToken(tid: string): Promise<Claims | undefined>;
}

/** What stops a subscription's round: a failed POST, or a state that needs its owner (SUSPENDED). */
class Stop {
  constructor(readonly problem: string, readonly suspend: boolean) {}
}

export class SubscriptionDelivery {
  /** This process's identity in the leases: a restarted process is another node, and waits for its old leases to expire. */
  private readonly node = randomUUID();
  private readonly running = new Map<string, Promise<void>>();
  private readonly loop: PollLoop;

  constructor(private readonly storage: Storage, private readonly tokens: TokenClaims, private readonly options: DeliveryOptions) {
    this.loop = new PollLoop(options.pollMs, () => this.poll(), options.onError);
  }

  start(): void {
    this.loop.start();
  }

  /** Stops polling, aborts the POSTs in flight (their versions are delivered again later) and gives up this node's leases. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled(this.running.values());
    await this.storage.subscriptions.release(this.node).catch(() => undefined);
  }

  /** Takes or renews the leases, and starts a round for each subscription that is not in one and not backing off. */
  private async poll(): Promise<void> {
    const now = Date.now();
    const held = await this.storage.subscriptions.claim(this.node, now, now + this.options.leaseMs, CLAIMED_PER_POLL);
    for (const subscription of held) {
      const key = `${subscription.sid}/${subscription.id}`;
      if (this.running.has(key) || subscription.retryAt > now || this.loop.stopped.aborted) continue;
      this.running.set(key, this.round(subscription).catch((error: unknown) => this.options.onError?.(error)).finally(() => this.running.delete(key)));
    }
  }

  private async unchanged(subscription: SubscriptionRecord): Promise<boolean> {
    const now = await this.storage.subscriptions.get(subscription.sid, subscription.id);
    return now !== undefined && now.state === 'ACTIVE' && now.destination === subscription.destination && now.type === subscription.type
      && now.filter === subscription.filter && now.tokenId === subscription.tokenId;
  }

  /**
   * Whether the subscription's token (the one that created or last changed it) still exists and may still do what
   * creating it needed: a subscription never sends a space's features to a party that may no longer read them.
   */
  private async rightsHeld(subscription: SubscriptionRecord, space: StoredSpace): Promise<void> {
    const resume = 'PUT the subscription with a token that may read the space, with status.state ACTIVE, to resume.';
    if (subscription.tokenId === null) throw new Stop(`The subscription was made before the hub recorded whose rights deliver it. ${resume}`, true);
    const claims = await this.tokens.claimsOfToken(subscription.tokenId);
    if (claims === undefined) throw new Stop(`The token that created or last changed the subscription was deleted or has expired. ${resume}`, true);
    if (!allows(claims, subscriptionAccess(space, true))) {
      throw new Stop(`The token that created or last changed the subscription no longer has manageSpaces and readFeatures on the space. ${resume}`, true);
    }
  }

  /** Delivers the versions after the delivered one, each recorded as delivered once every body of it was accepted. */
  private async round(subscription: SubscriptionRecord): Promise<void> {
    let delivered = subscription.delivered;
    const record = (outcome: { attempts: number; retryAt: number; lastError: string | null; suspend: boolean }) =>
      this.storage.subscriptions.record(subscription.sid, subscription.id, this.node, { delivered, ...outcome });
    try {
      const filter = new FeatureFilter(subscription.filter === null ? undefined : JSON.parse(subscription.filter) as FilterSpec);
      for (let first = true; ; first = false) {
        // A long catch-up goes on only while the subscription is as the round found it: a PUT takes effect within a read.
        if (!first && !(await this.unchanged(subscription))) return;
        // Read again for each read of versions: its key and whether it keeps history (its rights are decided below).
        const space = await this.storage.spaces.get(subscription.spaceId);
        // The space was deleted (and perhaps made again): its subscriptions went with it.
        if (!space || space.key.sid !== subscription.sid) {
          await this.storage.subscriptions.delete(subscription.sid, subscription.id);
          return;
        }
        if (!keepsHistory(space.definition)) throw new Stop('The space no longer keeps history (versionsToKeep is 1), which subscriptions are delivered from.', true);
        const { head } = await this.storage.features.versions(space.key);
        if (head <= delivered) break;
        if (head - delivered > this.options.maxLag) {
          throw new Stop(`The subscription fell more than ${this.options.maxLag} versions behind HEAD (${head}), beyond which its history is not kept for it.`, true);
        }
        const versions = await this.storage.history.versionsIn(space.key, { from: delivered + 1, to: head }, VERSIONS_PER_READ);
        // Version records are removed oldest first: the ones read follow each other when the first is the next one.
        if (versions[0]?.version !== delivered + 1) {
          throw new Stop(`Version ${delivered + 1} is no longer kept, so it cannot be delivered; PUT the subscription with status.state ACTIVE to resume after what is gone.`, true);
        }
        // The rights are decided on the space as it is after HEAD was read (as event streams do, event-feed.ts): every
        // version read was committed before, so one written after a change of its rights (unsharing, fewer packages,
        // another owner) is never delivered on the row read before that change.
        const current = await this.storage.spaces.get(subscription.spaceId);
        if (!current || current.key.sid !== subscription.sid) continue;
        for (const version of versions) {
          await this.rightsHeld(subscription, current);
          for await (const body of versionBodies(this.storage, space.key, subscription, version, filter)) {
            if (this.loop.stopped.aborted) return;
            const problem = await postWebhook(subscription.destination, body, {
              'x-hub-signature-256': signatureOf(subscription.secret, body),
              'x-hub-subscription': subscription.id,
              'x-hub-version': String(version.version),
            }, { timeoutMs: this.options.timeoutMs, allowPrivate: this.options.allowPrivate, signal: this.loop.stopped });
            if (problem !== undefined) throw new Stop(`Delivering version ${version.version} failed: ${problem}.`, false);
          }
          delivered = version.version;
          if (!(await record({ attempts: 0, retryAt: 0, lastError: null, suspend: false }))) return;
        }
      }
    } catch (error) {
      if (!(error instanceof Stop)) throw error;
      if (this.loop.stopped.aborted) return;
      const attempts = subscription.attempts + (error.suspend ? 0 : 1);
      const suspend = error.suspend || attempts >= this.options.retries;
      const problem = suspend && !error.suspend ? `${error.problem} Suspended after ${attempts} failed attempts in a row; PUT status.state ACTIVE to resume.` : error.problem;
      const backoff = Math.min(MAX_BACKOFF_MS, this.options.backoffMs * 2 ** Math.max(0, attempts - 1));
      await record({ attempts, retryAt: suspend ? 0 : Date.now() + backoff, lastError: problem, suspend });
    }
  }
}
