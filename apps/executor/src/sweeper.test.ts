import type { JobMessage } from '@gi/contracts';
import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { FileOwner, FileStore } from '@gi/domain';
import { createLogger, createMetrics } from '@gi/observability';
import { createFakeStore, ManualClock, newInvocation } from '@gi/testing';
import { startSweeper } from './sweeper';
import type { SweeperSettings } from './sweeper';

const SETTINGS: SweeperSettings = {
  recoverAllAtStart: false,
  recoverInRounds: false,
  intervalMs: 10_000,
  republishAfterMs: 30_000,
  pools: ['fast', 'slow'],
  expiryIntervalMs: 600_000,
  fileGraceMs: 60_000,
};

/** The fake store and a bus, logger, metrics, callback sender and file store that note what they are asked; timers are jest's. */
function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createFakeStore(clock);
  const published: string[] = [];
  const bus = {
    publish: jest.fn(async (job: JobMessage) => void published.push(job.invocationId)),
    queueDepth: jest.fn(async (pool: string): Promise<number | null> => (pool === 'fast' ? 3 : null)),
  };
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('debug', 'executor', { destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const metrics = createMetrics();
  const callbacks = { kick: jest.fn() };
  let owners: FileOwner[] = [];
  const files = {
    listOwners: jest.fn(async (_before: number) => owners),
    deleteAll: jest.fn(async (_owner: FileOwner) => undefined),
    deleteAbandoned: jest.fn(async (_before: number) => 2),
  };
  const start = (settings: Partial<SweeperSettings> = {}) =>
    startSweeper({ store, bus, clock, logger, metrics, files: files as unknown as FileStore, callbacks }, { ...SETTINGS, ...settings });
  /** An invocation its executor claimed, with a lease of `leaseMs`. */
  const running = async (leaseMs: number) => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    await store.invocations.claim(inv, 'gone', leaseMs, clock.now());
    return inv;
  };
  /** An invocation whose durable run sleeps until `until`. */
  const waiting = async (until: number) => {
    const inv = await running(60_000);
    const lease = { owner: 'gone', attempt: 1 };
    await store.journal.beginWait(inv, lease, { kind: 'sleep', name: 'nap', occurrence: 1, startedAt: clock.now(), until }, DEFAULT_JOURNAL_LIMITS);
    await store.invocations.suspend(inv, lease, { reason: { kind: 'sleep', name: 'nap', until }, activeMs: 1, keepUntil: until + 3600_000 }, clock.now());
    return inv;
  };
  const queued = async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    return inv;
  };
  const logged = (msg: string) => lines.filter((line) => line.msg === msg);
  const gauge = async (name: 'waitingInvocations' | 'queueDepth') => (await metrics[name].get()).values.map((v) => [v.labels.pool, v.value]);
  return { clock, store, bus, published, lines, logged, gauge, callbacks, files, start, running, waiting, queued, setOwners: (list: FileOwner[]) => (owners = list) };
}

describe('startSweeper', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'queueMicrotask', 'nextTick'] }));
  afterEach(() => jest.useRealTimers());

  it('at the start of the first embedded process, publishes everything unfinished again, kicks the callbacks and wakes the waits that ended', async () => {
    const w = world();
    const leased = await w.running(3600_000);
    const slept = await w.waiting(w.clock.now() + 1000);
    w.clock.advance(1000);
    // Published this very millisecond, yet a job no process holds any more.
    const fresh = await w.queued();

    const stop = await w.start({ recoverAllAtStart: true });
    stop();

    expect(new Set(w.published)).toEqual(new Set([leased.id, fresh.id, slept.id]));
    expect(w.logged('recovered unfinished invocations')).toEqual([expect.objectContaining({ requeued: 1, republished: 2 })]);
    expect(w.logged('woke waiting invocations')).toEqual([expect.objectContaining({ level: 20, woken: 1 })]);
    expect(w.callbacks.kick).toHaveBeenCalledTimes(1);
  });

  it('otherwise leaves what runs or is queued alone at the start, and says nothing when nothing was recovered or woken', async () => {
    const w = world();
    await w.running(3600_000);
    await w.queued();
    const stop = await w.start({ recoverInRounds: true });
    stop();
    expect(w.published).toEqual([]);
    expect(w.lines).toEqual([]);
    expect(w.callbacks.kick).toHaveBeenCalledTimes(1);
    // Nothing left to recover at the start of the first process, nor in a round: nothing said either.
    const empty = world();
    const stopEmpty = await empty.start({ recoverAllAtStart: true, recoverInRounds: true });
    await jest.advanceTimersByTimeAsync(SETTINGS.intervalMs);
    stopEmpty();
    expect(empty.lines).toEqual([]);
  });

  it('each round, as one executor of many, requeues expired leases and republishes jobs published too long ago, kicks the callbacks, and reports waits and queue depths', async () => {
    const w = world();
    const stop = await w.start({ recoverInRounds: true });
    const expired = await w.running(1000);
    const old = await w.queued();
    w.clock.advance(25_000);
    // Published 10 s ago: its job may well still be in the queue.
    await w.queued();
    await w.waiting(w.clock.now() + 3600_000);
    w.clock.advance(10_000);

    await jest.advanceTimersByTimeAsync(SETTINGS.intervalMs);
    stop();

    expect(new Set(w.published)).toEqual(new Set([expired.id, old.id]));
    expect(w.logged('sweep recovered invocations')).toEqual([expect.objectContaining({ requeued: 1, republished: 2 })]);
    expect(w.callbacks.kick).toHaveBeenCalledTimes(2);
    expect(await w.gauge('waitingInvocations')).toEqual([[undefined, 1]]);
    // A pool whose depth the bus cannot tell is left unreported.
    expect(await w.gauge('queueDepth')).toEqual([['fast', 3]]);
  });

  it('leaves expired leases to others when it is the only executor', async () => {
    const w = world();
    const stop = await w.start();
    await w.running(1000);
    w.clock.advance(60_000);
    await jest.advanceTimersByTimeAsync(SETTINGS.intervalMs);
    stop();
    expect(w.published).toEqual([]);
    expect(w.callbacks.kick).toHaveBeenCalledTimes(2);
  });

  it('wakes the waits that ended every second', async () => {
    const w = world();
    const stop = await w.start();
    const slept = await w.waiting(w.clock.now() + 1500);
    w.clock.advance(1500);
    await jest.advanceTimersByTimeAsync(999);
    expect(w.published).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    stop();
    expect(w.published).toEqual([slept.id]);
  });

  it('logs a round or a wake that fails, tries again the next time, and starts no round while one is going', async () => {
    const w = world();
    const stop = await w.start();
    jest.spyOn(w.store.invocations, 'countWaiting').mockRejectedValueOnce(new Error('store down'));
    jest.spyOn(w.store.invocations, 'wakeDue').mockRejectedValueOnce(new Error('store down'));
    await jest.advanceTimersByTimeAsync(SETTINGS.intervalMs);
    expect(w.logged('sweep failed; next round will retry')).toEqual([expect.objectContaining({ level: 40, err: expect.objectContaining({ message: 'store down' }) })]);
    expect(w.logged('waking waiting invocations failed; the next round retries')).toEqual([expect.objectContaining({ level: 40, err: expect.objectContaining({ message: 'store down' }) })]);

    // A round that hangs on the bus: the rounds due meanwhile are skipped, and the wakes go on.
    let answer = (_depth: number | null) => undefined as void;
    w.bus.queueDepth.mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));
    const slept = await w.waiting(w.clock.now() + 1000);
    w.clock.advance(1000);
    await jest.advanceTimersByTimeAsync(3 * SETTINGS.intervalMs);
    expect(w.published).toEqual([slept.id]);
    expect(w.bus.queueDepth).toHaveBeenCalledTimes(1);
    // Once it ends, the next round runs: both pools asked again.
    answer(5);
    await jest.advanceTimersByTimeAsync(SETTINGS.intervalMs);
    stop();
    expect(w.bus.queueDepth.mock.calls.map(([pool]) => pool)).toEqual(['fast', 'slow', 'fast', 'slow']);
    expect(w.logged('sweep failed; next round will retry')).toHaveLength(1);
  });

  it('starts no wake while one is going', async () => {
    const w = world();
    const stop = await w.start();
    let answer = (_due: []) => undefined as void;
    const wakeDue = jest.spyOn(w.store.invocations, 'wakeDue').mockImplementationOnce(() => new Promise((resolve) => (answer = resolve)));
    await jest.advanceTimersByTimeAsync(3000);
    expect(wakeDue).toHaveBeenCalledTimes(1);
    answer([]);
    await jest.advanceTimersByTimeAsync(1000);
    stop();
    expect(wakeDue).toHaveBeenCalledTimes(2);
  });

  it('deletes expired invocations and the files of those gone, older than the grace, once an expiry interval passed', async () => {
    const w = world();
    const kept = await w.queued();
    const gone = { botId: 'bot-a', id: 'gone-1' };
    w.setOwners([kept, gone]);
    const expiring = newInvocation({ createdAt: w.clock.now(), expireAt: w.clock.now() + 1000 });
    await w.store.invocations.create(expiring);
    const stop = await w.start();
    w.clock.advance(2000);

    await jest.advanceTimersByTimeAsync(SETTINGS.expiryIntervalMs - 1);
    expect(w.files.listOwners).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(1);

    expect(await w.store.invocations.get(expiring)).toBeNull();
    expect(w.files.listOwners).toHaveBeenCalledWith(w.clock.now() - SETTINGS.fileGraceMs);
    expect(w.files.deleteAll.mock.calls).toEqual([[gone]]);
    expect(w.logged('deleted expired invocations and their files')).toEqual([expect.objectContaining({ level: 30, invocations: 1, owners: 1, abandoned: 2 })]);

    // Files alone are said too; nothing to delete, nothing said. A failure: said, and tried again at the next interval.
    w.setOwners([kept, { botId: 'bot-a', id: 'gone-2' }]);
    w.files.deleteAbandoned.mockResolvedValue(0);
    await jest.advanceTimersByTimeAsync(SETTINGS.expiryIntervalMs);
    w.setOwners([kept]);
    await jest.advanceTimersByTimeAsync(SETTINGS.expiryIntervalMs);
    w.files.listOwners.mockRejectedValueOnce(new Error('disk gone'));
    await jest.advanceTimersByTimeAsync(SETTINGS.expiryIntervalMs);
    stop();
    expect(w.logged('deleted expired invocations and their files').map(({ invocations, owners, abandoned }) => [invocations, owners, abandoned])).toEqual([
      [1, 1, 2],
      [0, 1, 0],
    ]);
    expect(w.logged('expiry sweep failed; next round will retry')).toEqual([expect.objectContaining({ level: 40, err: expect.objectContaining({ message: 'disk gone' }) })]);
  });

  it('stops every timer when stopped', async () => {
    const w = world();
    const stop = await w.start();
    const wakeDue = jest.spyOn(w.store.invocations, 'wakeDue');
    stop();
    await jest.advanceTimersByTimeAsync(SETTINGS.expiryIntervalMs);
    expect(wakeDue).not.toHaveBeenCalled();
    expect(w.callbacks.kick).toHaveBeenCalledTimes(1);
    expect(w.files.listOwners).not.toHaveBeenCalled();
  });
});
