// The request rate a token may carry (`limits.maxRequestsPerMinute`): a token bucket per token, exact on each node (kept by the primary when the node has workers).

/** Beyond this many tokens the buckets start over: memory stays bounded under a flood of distinct tokens. */
const MAX_BUCKETS = 10_000;

interface Bucket {
  /** Requests that may still be made now; refills continuously at the rate. */
  available: number;
  at: number;
}

/**
 * A token may make `perMinute` requests in a burst, and then one every 60/perMinute seconds. The buckets live
 * in this node's memory, in its primary process when it serves from several workers (which ask it over IPC):
 * with several nodes behind a balancer a client gets up to that many times the rate.
 * Counting in the storage would add a write to every request, which the cheapest reads cannot afford
 * (docs/decisions.md, "Rights and quotas").
 */
export class RequestRates {
  private readonly buckets = new Map<string, Bucket>();

  /** Takes one request for `key`; returns undefined when allowed, else the whole seconds until one is. */
  take(key: string, perMinute: number, now: number): number | undefined {
    const perMs = perMinute / 60_000;
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.buckets.clear();
      bucket = { available: perMinute, at: now };
      this.buckets.set(key, bucket);
    }
    bucket.available = Math.min(perMinute, bucket.available + (now - bucket.at) * perMs);
    bucket.at = now;
    if (bucket.available >= 1) {
      bucket.available -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - bucket.available) / perMs / 1000));
  }
}
