import type { Invocation } from '@gi/domain';
import { retryAfterSeconds, RunTimes } from './run-times';

describe('retryAfterSeconds', () => {
  it.each([
    ['no history', [], 0, 5],
    ['a queued run: the median', [4000, 8000, 6000], 0, 6],
    ['an even count: the mean of the middle two', [1000, 3000, 5000, 7000], 0, 4],
    ['the median minus the time already taken, rounded up', [10_000], 2500, 8],
    ['a run past the median: 1 s', [2000], 9000, 1],
    ['a short integration: at least 1 s', [50, 80, 60], 0, 1],
    ['a long integration: at most 30 s', [600_000], 1000, 30],
  ])('%s', (_case, durations, elapsed, expected) => {
    expect(retryAfterSeconds(durations, elapsed)).toBe(expected);
  });
});

describe('RunTimes', () => {
  const running = (startedAt: number) => ({ botId: 'acme', integrationId: 'ack', status: 'Running' as Invocation['status'], startedAt, waiting: null as Invocation['waiting'] });

  function setUp(durations: number[] | Error) {
    const now = { value: 100_000 };
    const reads: string[] = [];
    const store = {
      recentDurations: async (botId: string, integrationId: string, limit: number) => {
        reads.push(`${botId}/${integrationId}/${limit}`);
        if (durations instanceof Error) throw durations;
        return durations;
      },
    };
    const runTimes = new RunTimes(store, { now: () => now.value }, { sample: 20, refreshMs: 10_000, maxIntegrations: 2 });
    return { runTimes, reads, now };
  }

  it('estimates from the store and counts the running attempt\'s elapsed time', async () => {
    const { runTimes, reads, now } = setUp([12_000]);
    expect(await runTimes.retryAfter(running(now.value - 4000))).toBe(8);
    expect(await runTimes.retryAfter({ ...running(now.value - 4000), status: 'Queued' })).toBe(12);
    expect(reads).toEqual(['acme/ack/20']);
  });

  it('asks a durable run suspended in a wait to poll again when the wait ends, within the bounds, without reading run times', async () => {
    const { runTimes, reads, now } = setUp([12_000]);
    const waiting = (untilIn: number) => ({ ...running(now.value), status: 'Waiting' as const, waiting: { kind: 'sleep' as const, name: 'pause', until: now.value + untilIn } });
    expect(await runTimes.retryAfter(waiting(7_500))).toBe(8);
    expect(await runTimes.retryAfter(waiting(3_600_000))).toBe(30);
    expect(await runTimes.retryAfter(waiting(-5_000))).toBe(1);
    expect(reads).toEqual([]);
  });

  it('asks the store again only once the refresh time has passed, and per integration', async () => {
    const { runTimes, reads, now } = setUp([3000]);
    await Promise.all([runTimes.retryAfter(running(now.value)), runTimes.retryAfter(running(now.value))]);
    now.value += 9_999;
    await runTimes.retryAfter(running(now.value));
    expect(reads).toHaveLength(1);
    now.value += 1;
    await runTimes.retryAfter(running(now.value));
    await runTimes.retryAfter({ ...running(now.value), integrationId: 'other' });
    expect(reads).toEqual(['acme/ack/20', 'acme/ack/20', 'acme/other/20']);
  });

  it('forgets the oldest integration beyond its bound', async () => {
    const { runTimes, reads, now } = setUp([3000]);
    for (const integrationId of ['a', 'b', 'c', 'a']) await runTimes.retryAfter({ ...running(now.value), integrationId });
    expect(reads).toEqual(['acme/a/20', 'acme/b/20', 'acme/c/20', 'acme/a/20']);
  });

  it('falls back to the default when the store fails, and asks again next time', async () => {
    const { runTimes, reads, now } = setUp(new Error('store down'));
    expect(await runTimes.retryAfter(running(now.value))).toBe(5);
    expect(await runTimes.retryAfter(running(now.value))).toBe(5);
    expect(reads).toHaveLength(2);
  });
});
