import { GiError } from './errors';

/**
 * Token buckets keyed by caller (e.g. bot id): `ratePerSecond` tokens refill continuously up to `burst`.
 * In-memory and per process; a shared limiter for several gateway replicas needs the store or broker.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
  ) {}

  /** Takes one token for `key`, or throws 429 with the seconds until one is available. */
  take(key: string, now: number): void {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: now };
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (bucket.tokens < 1) {
      const retryAfter = Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
      throw new GiError('rate_limited', 'Too many requests', `The rate limit of ${this.ratePerSecond} calls per second for this bot was exceeded.`, {
        headers: { 'Retry-After': String(retryAfter) },
      });
    }
    bucket.tokens -= 1;
  }
}
