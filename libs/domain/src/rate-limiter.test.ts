import type { GiError } from './errors';
import { RateLimiter } from './rate-limiter';

describe('RateLimiter', () => {
  it('allows a burst, then refills at the rate, per key', () => {
    const limiter = new RateLimiter(2, 3);
    const t = 1_000_000;
    for (let i = 0; i < 3; i++) limiter.take('a', t);
    expect(() => limiter.take('a', t)).toThrow('rate limit');
    limiter.take('b', t);
    limiter.take('a', t + 500);
    expect(() => limiter.take('a', t + 500)).toThrow();
  });

  it('says when to retry', () => {
    const limiter = new RateLimiter(0.5, 1);
    limiter.take('a', 0);
    try {
      limiter.take('a', 0);
    } catch (error) {
      expect((error as GiError).code).toBe('rate_limited');
      expect((error as GiError).headers['Retry-After']).toBe('2');
    }
    expect.assertions(2);
  });
});
