import { botLimits, DEFAULT_QUOTAS, shareOf, tokenLimits } from './quotas';
import { TokenBuckets } from './token-buckets';

describe('quotas', () => {
  const defaults = { ratePerSecond: 10, burst: 20, maxInFlight: 0 };

  it('fall back to the service defaults for a bot, to no limit of its own for a token', () => {
    expect(botLimits(DEFAULT_QUOTAS, defaults)).toEqual({ rate: { perSecond: 10, burst: 20 }, maxInFlight: null });
    expect(botLimits(DEFAULT_QUOTAS, { ratePerSecond: 0, burst: null, maxInFlight: 0 })).toEqual({ rate: null, maxInFlight: null });
    expect(botLimits({ ratePerSecond: 2.5, burst: null, maxInFlight: 4 }, defaults)).toEqual({ rate: { perSecond: 2.5, burst: 3 }, maxInFlight: 4 });
    expect(botLimits({ ratePerSecond: 0.2, burst: null, maxInFlight: null }, defaults).rate).toEqual({ perSecond: 0.2, burst: 1 });
    expect(botLimits(DEFAULT_QUOTAS, { ...defaults, maxInFlight: 50 }).maxInFlight).toBe(50);
    expect(tokenLimits(undefined)).toEqual({ rate: null, maxInFlight: null });
    expect(tokenLimits({ ratePerSecond: 5, burst: 7, maxInFlight: 1 })).toEqual({ rate: { perSecond: 5, burst: 7 }, maxInFlight: 1 });
  });

  it('divide a limit among the gateways sharing it, each keeping at least one call of burst', () => {
    expect(shareOf({ perSecond: 10, burst: 20 }, 4)).toEqual({ perSecond: 2.5, burst: 5 });
    expect(shareOf({ perSecond: 1, burst: 2 }, 3)).toEqual({ perSecond: 1 / 3, burst: 1 });
    expect(shareOf({ perSecond: 1, burst: 2 }, 0)).toEqual({ perSecond: 1, burst: 2 });
  });
});

describe('TokenBuckets', () => {
  const t = 1_000_000;

  it('allows a burst, then refills at the rate, per key', () => {
    const buckets = new TokenBuckets();
    const limit = { perSecond: 2, burst: 3 };
    for (let i = 0; i < 3; i++) {
      expect(buckets.wait('a', limit, t)).toBe(0);
      buckets.take('a');
    }
    expect(buckets.wait('a', limit, t)).toBe(0.5);
    expect(buckets.wait('b', limit, t)).toBe(0);
    expect(buckets.wait('a', limit, t + 500)).toBe(0);
    buckets.take('a');
    expect(buckets.wait('a', limit, t + 500)).toBeCloseTo(0.5);
  });

  it('takes back a refunded call', () => {
    const buckets = new TokenBuckets();
    const limit = { perSecond: 1, burst: 1 };
    buckets.wait('a', limit, t);
    buckets.take('a');
    expect(buckets.wait('a', limit, t)).toBe(1);
    buckets.refund('a');
    buckets.refund('a');
    expect(buckets.wait('a', limit, t)).toBe(0);
    buckets.take('a');
    expect(buckets.wait('a', limit, t)).toBe(1);
  });

  it('applies a changed limit at once, never holding more than the new burst', () => {
    const buckets = new TokenBuckets();
    expect(buckets.wait('a', { perSecond: 100, burst: 100 }, t)).toBe(0);
    const tight = { perSecond: 0.5, burst: 1 };
    expect(buckets.wait('a', tight, t)).toBe(0);
    buckets.take('a');
    expect(buckets.wait('a', tight, t)).toBe(2);
  });

  it('waits only for the part of a call not refilled yet, and leaves keys it never saw alone', () => {
    const buckets = new TokenBuckets();
    const limit = { perSecond: 2, burst: 1 };
    buckets.wait('a', limit, t);
    buckets.take('a');
    expect(buckets.wait('a', limit, t + 250)).toBe(0.25);
    expect(() => {
      buckets.take('unknown');
      buckets.refund('unknown');
    }).not.toThrow();
    expect(buckets.size).toBe(1);
  });

  it('forgets a bucket as soon as it refilled at its rate', () => {
    const buckets = new TokenBuckets();
    buckets.wait('a', { perSecond: 2, burst: 2 }, t);
    buckets.take('a');
    buckets.prune(t + 499);
    expect(buckets.size).toBe(1);
    buckets.prune(t + 500);
    expect(buckets.size).toBe(0);
  });

  it('forgets buckets that have refilled', () => {
    const buckets = new TokenBuckets();
    const limit = { perSecond: 1, burst: 2 };
    buckets.wait('a', limit, t);
    buckets.take('a');
    buckets.wait('b', limit, t);
    buckets.take('b');
    buckets.take('b');
    buckets.prune(t + 1000);
    expect(buckets.size).toBe(1);
    buckets.prune(t + 2000);
    expect(buckets.size).toBe(0);
  });
});
