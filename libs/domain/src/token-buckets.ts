import type { RateLimit } from './quotas';

interface Bucket {
  tokens: number;
  at: number;
  /** The limit last applied, to tell when the bucket is full again. */
  limit: RateLimit;
}

/**
 * Token buckets keyed by caller (a bot, a token): each refills continuously at its limit's rate up to
 * its burst. The limit is given on every call, so a changed quota applies at once. In memory, per
 * process: gateways share a limit by each enforcing their share of it (see `shareOf`).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();

  /** Seconds until `key` has a call to spend (0: now), after refilling its bucket up to `now`. */
  wait(key: string, limit: RateLimit, now: number): number {
    const bucket = this.refill(key, limit, now);
    return bucket.tokens >= 1 ? 0 : (1 - bucket.tokens) / limit.perSecond;
  }

  /** Spends one call of `key` (after `wait` said 0). */
  take(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens -= 1;
  }

  /** Gives back a call spent on a request that was turned away for another reason. */
  refund(key: string): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(bucket.limit.burst, bucket.tokens + 1);
  }

  /** Forgets buckets that are full again: they hold nothing a fresh bucket would not. */
  prune(now: number): void {
    for (const [key, { tokens, at, limit }] of this.buckets) {
      if (tokens + ((now - at) / 1000) * limit.perSecond >= limit.burst) this.buckets.delete(key);
    }
  }

  get size(): number {
    return this.buckets.size;
  }

  private refill(key: string, limit: RateLimit, now: number): Bucket {
    const bucket = this.buckets.get(key) ?? { tokens: limit.burst, at: now, limit };
    bucket.tokens = Math.min(limit.burst, bucket.tokens + (Math.max(0, now - bucket.at) / 1000) * limit.perSecond);
    bucket.at = now;
    bucket.limit = limit;
    this.buckets.set(key, bucket);
    return bucket;
  }
}
