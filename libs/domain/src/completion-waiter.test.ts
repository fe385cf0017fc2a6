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
