import { InFlight } from './in-flight';

describe('InFlight', () => {
  it('counts each work until it settles, fulfilled or rejected, and settles once all tracked before have', async () => {
    const inFlight = new InFlight();
    let finish!: () => void;
    let fail!: (error: Error) => void;
    const slow = inFlight.track(new Promise<void>((resolve) => (finish = resolve)));
    const failing = inFlight.track(new Promise<void>((_, reject) => (fail = reject)));
    void failing.catch(() => undefined);
    expect(inFlight.size).toBe(2);
    let allSettled = false;
    const waited = inFlight.settled().then(() => (allSettled = true));
    fail(new Error('no'));
    await failing.catch(() => undefined);
    expect([inFlight.size, allSettled]).toEqual([1, false]);
    finish();
    await slow;
    await waited;
    expect([inFlight.size, allSettled]).toEqual([0, true]);
  });

  it('returns the work it tracks, and has settled at once with nothing in flight', async () => {
    const inFlight = new InFlight();
    const work = Promise.resolve(7);
    expect(inFlight.track(work)).toBe(work);
    await expect(work).resolves.toBe(7);
    await inFlight.settled();
    expect(inFlight.size).toBe(0);
  });
});
