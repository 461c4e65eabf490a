// What the processes of one node share in memory: the request rates of tokens and the news of deleted tokens.
import { RequestRates } from './request-rate.js';

/**
 * A node may serve from several processes (HUB_WORKERS, src/cluster): a token's request rate is counted once for
 * all of them, and a token deleted through one must stop working at once on the others, which cache tokens.
 */
export interface NodePeers {
  /** Takes one request of the token's rate; undefined when allowed, else the whole seconds until one is. */
  takeRequest(tid: string, perMinute: number): Promise<number | undefined>;
  /** Tells the node's other processes that a token was deleted; resolves once none of them accepts it any more. */
  announceRevocation(secretHash: string): Promise<void>;
  /** Calls `listener` with the secret hash of each token another process of the node deleted. */
  onRevocation(listener: (secretHash: string) => void): void;
}

/** A node of one process: the rates are counted here, and there is nobody to tell. */
export class SingleProcess implements NodePeers {
  private readonly rates = new RequestRates();

  async takeRequest(tid: string, perMinute: number): Promise<number | undefined> {
    return this.rates.take(tid, perMinute, Date.now());
  }

  async announceRevocation(): Promise<void> {}

  onRevocation(): void {}
}
