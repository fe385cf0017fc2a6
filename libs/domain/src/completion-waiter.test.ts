import { CompletionWaiter } from './completion-waiter';
import { outcomeOf } from './outcome';

const event = (invocationId: string) => ({ kind: 'completed' as const, version: 1 as const, botId: 'b', invocationId, status: 'Completed' as const });

describe('CompletionWaiter', () => {
  it('wakes every waiter of the invocation and forgets them', async () => {
    const waiter = new CompletionWaiter();
    const a = waiter.wait('x', 10_000);
    const b = waiter.wait('x', 10_000);
    const other = waiter.wait('y', 50);
    waiter.notify(event('x'));
    expect(await a.promise).toEqual(event('x'));
    expect(await b.promise).toEqual(event('x'));
    expect(await other.promise).toBeNull();
    expect(waiter.size).toBe(0);
  });

  it('releases every waiter at shutdown', async () => {
    const waiter = new CompletionWaiter();
    const waits = [waiter.wait('x', 10_000), waiter.wait('x', 10_000), waiter.wait('y', 10_000)];
    waiter.releaseAll();
    expect(await Promise.all(waits.map((w) => w.promise))).toEqual([null, null, null]);
    expect(waiter.size).toBe(0);
  });

  it('resolves null on cancel', async () => {
    const waiter = new CompletionWaiter();
    const w = waiter.wait('x', 10_000);
    w.cancel();
    expect(await w.promise).toBeNull();
    expect(waiter.size).toBe(0);
  });
});

describe('outcomeOf', () => {
  const base = { logs: [], durationMs: 1 };
  it('maps runs to recorded outcomes without leaking what a connector threw', () => {
    expect(outcomeOf({ kind: 'ok', responseBody: { a: 1 }, ...base }, 1000)).toEqual({ status: 'Completed', responseBody: { a: 1 } });
    expect(outcomeOf({ kind: 'raised', title: 'T', message: 'M', ...base }, 1000)).toEqual({ status: 'Failed', error: { code: 'connector_error', title: 'T', detail: 'M' } });
    const threw = outcomeOf({ kind: 'failed', reason: 'threw', message: 'secret internals', ...base }, 1000);
    expect(JSON.stringify(threw)).not.toContain('secret internals');
    expect(threw).toMatchObject({ status: 'Failed', error: { code: 'connector_failed' } });
    expect(outcomeOf({ kind: 'failed', reason: 'timeout', message: '', ...base }, 5000)).toMatchObject({ error: { code: 'timeout' } });
  });

  it('tells its watcher of every wait as it starts, and knows which are open', () => {
    const waiter = new CompletionWaiter();
    const seen: Array<[string, boolean | undefined]> = [];
    waiter.watchWaits((id, options) => seen.push([id, options.runsHere]));
    const poll = waiter.wait('x', 10_000);
    waiter.wait('y', 10_000, { runsHere: true }).cancel();
    expect(seen).toEqual([
      ['x', undefined],
      ['y', true],
    ]);
    expect(waiter.isWaiting('x')).toBe(true);
    expect(waiter.isWaiting('y')).toBe(false);
    poll.cancel();
  });
});

describe('CompletionWaiter, one waiter among several, timers and routes', () => {
  afterEach(() => jest.useRealTimers());

  it('keeps waking the other waiters of an invocation when one cancels, and ignores an event nobody waits for', async () => {
    const waiter = new CompletionWaiter();
    const cancelled = waiter.wait('x', 10_000);
    const kept = waiter.wait('x', 10_000);
    cancelled.cancel();
    expect(() => waiter.notify(event('nobody'))).not.toThrow();
    waiter.notify(event('x'));
    expect([await cancelled.promise, await kept.promise]).toEqual([null, event('x')]);
  });

  it('waits until its deadline, not less', async () => {
    jest.useFakeTimers();
    const waiter = new CompletionWaiter();
    const w = waiter.wait('x', 10_000);
    jest.advanceTimersByTime(9_999);
    expect(waiter.isWaiting('x')).toBe(true);
    jest.advanceTimersByTime(1);
    expect([waiter.isWaiting('x'), await w.promise]).toEqual([false, null]);
  });

  it('releases the route\'s watch once, when the wait ends or, if it ended first, as soon as it is routed', async () => {
    const released: string[] = [];
    const waiter = new CompletionWaiter(async (invocationId) => ({ release: () => released.push(invocationId) }));
    const routedFirst = waiter.wait('x', 10_000);
    await routedFirst.routed;
    expect(released).toEqual([]);
    routedFirst.cancel();
    routedFirst.cancel();
    const endedFirst = waiter.wait('y', 10_000);
    endedFirst.cancel();
    await endedFirst.routed;
    expect(released).toEqual(['x', 'y']);
  });

  it('still ends at its deadline when the route fails', async () => {
    const waiter = new CompletionWaiter(async () => {
      throw new Error('broker gone');
    });
    const w = waiter.wait('x', 5);
    await expect(w.routed).resolves.toBeUndefined();
    expect(await w.promise).toBeNull();
  });
});
