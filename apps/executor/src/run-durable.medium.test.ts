import pino from 'pino';
import { LocalJobBus } from '@gi/bus-local';
import { DEFAULT_CONNECTOR_LIMITS, DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { ConnectorRunRequest, ConnectorRunResult, Store } from '@gi/domain';
import type { CompletionEvent, JobMessage } from '@gi/contracts';
import { IntegrationVersions } from './integration-versions';
import { runInvocation } from './run-invocation';
import { startSweeper } from './sweeper';
import type { ExecutorDeps } from './executor-deps';
import { createMetrics } from '@gi/observability';
import { createSqliteStore } from '@gi/store-sqlite';
import { newInvocation, TEST_DURABLE_SETTINGS, ManualClock } from '@gi/testing';
import { PlayedRuntime } from './played-runtime.fixture';

/**
 * The executor's side of durable runs, on the SQLite store: the journal handed to a run and written under
 * its lease, a suspended run stored Waiting with its lines and woken when its time comes, active time
 * against the wall-time limit, the lifetime limit, and progress against giving up. The connector runtime
 * is the edge: a stand-in that plays the run's part through the DurableRun it is given.
 */

/** Goes on until the run is stopped (its lease found lost at a heartbeat), as a run whose executor hangs. */
const untilStopped = async (request: ConnectorRunRequest): Promise<ConnectorRunResult> => {
  await new Promise<void>((resolve) => (request.cancel?.requested ? resolve() : request.cancel?.onRequest(resolve)));
  return { kind: 'failed', reason: 'cancelled', message: 'stopped', logs: [], durationMs: 1 };
};

/** Waits until `check` passes (it throws until then), at most 5 s. */
async function eventually(check: () => unknown | Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      await check();
      return;
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
}

const sent = (name: string, occurrence: number, resultJson: string, at = 1) => ({ name, occurrence, attempts: 1, startedAt: at, status: 'done' as const, resultJson, finishedAt: at + 1 });

describe('durable runs in the executor (SQLite store, in-process bus)', () => {
  let store: Store;
  let bus: LocalJobBus;
  let runtime: PlayedRuntime;
  let clock: ManualClock;
  let deps: ExecutorDeps;
  let published: JobMessage[];
  let events: CompletionEvent[];

  beforeEach(async () => {
    clock = new ManualClock();
    store = createSqliteStore(':memory:', clock);
    bus = new LocalJobBus();
    runtime = new PlayedRuntime();
    published = [];
    events = [];
    const publish = bus.publish.bind(bus);
    bus.publish = async (job: JobMessage) => {
      published.push(job);
      return publish(job);
    };
    await bus.onCompletion((event) => events.push(event));
    deps = {
      store,
      bus,
      runtime,
      clock,
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
      ownerId: 'w1',
      leaseMs: 30_000,
      maxAttempts: 2,
      durable: TEST_DURABLE_SETTINGS,
      versions: new IntegrationVersions(store.catalog),
    };
    await store.catalog.putEntity('bot-a', 'Order', [], clock.now());
    await store.catalog.deployIntegration('bot-a', 'ack', { entityName: 'Order', code: 'v1', pool: 'default', timeoutSeconds: 10, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null }, clock.now());
  });
  afterEach(async () => {
    await bus.close();
    await store.close();
  });

  const job = (id: string): JobMessage => ({ kind: 'job', version: 1, botId: 'bot-a', invocationId: id, pool: 'default' });
  const created = async (overrides: Parameters<typeof newInvocation>[0] | object = {}) => {
    const inv = newInvocation({ createdAt: clock.now(), ...overrides });
    await store.invocations.create(inv);
    return inv;
  };

  it('a run that makes no step reads no journal and journals nothing', async () => {
    const inv = await created();
    const read = jest.spyOn(store.journal, 'read');
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(read).not.toHaveBeenCalled();
    expect(runtime.runs[0].durable).toMatchObject({ botId: 'bot-a', invocationId: inv.id, journal: [], limits: DEFAULT_JOURNAL_LIMITS, suspendAfterMs: 1000 });
    expect(await store.journal.read(inv)).toEqual([]);
  });

  it('hands a re-run the journal its earlier attempts wrote, under the new attempt\'s lease', async () => {
    const inv = await created();
    // The first attempt journals a step, then its executor dies (its lease ends unrecorded).
    runtime.play = async (request) => {
      await request.durable!.record(sent('send', 1, '"m-1"'));
      return untilStopped(request);
    };
    void runInvocation({ ...deps, leaseMs: 5_000, ownerId: 'dead' }, job(inv.id));
    await eventually(async () => expect((await store.journal.read(inv)).length).toBe(1));
    clock.advance(10_000);
    expect(await store.invocations.requeueExpiredLeases(clock.now())).toHaveLength(1);

    runtime.play = async (request) => {
      expect(request.durable!.journal).toEqual([expect.objectContaining({ name: 'send', occurrence: 1, status: 'done', resultJson: '"m-1"' })]);
      await request.durable!.record(sent('send', 2, '"m-2"'));
      return { kind: 'ok', responseBody: { sent: 2 }, logs: [], durationMs: 1 };
    };
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    const final = await store.invocations.get(inv);
    expect(final).toMatchObject({ status: 'Completed', attempt: 2, steps: 2, progressAttempt: 2 });
  });

  it('suspends a run that waits: Waiting until its time, its lines stored, its lease and slot given up; the sweeper wakes it, and it resumes', async () => {
    const inv = await created();
    const until = clock.now() + 60_000;
    runtime.play = async (request) => {
      await request.durable!.beginWait({ kind: 'sleep', name: 'pause', occurrence: 1, startedAt: clock.now(), until });
      return { kind: 'suspended', wait: { kind: 'sleep', name: 'pause', until }, logs: [{ at: clock.now(), level: 'info', message: 'before the pause' }], durationMs: 250 };
    };
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    const waiting = await store.invocations.get(inv);
    expect(waiting).toMatchObject({ status: 'Waiting', waiting: { kind: 'sleep', name: 'pause', until }, leaseOwner: null, activeMs: 250, steps: 1 });
    expect(waiting?.logs.map((line) => line.message)).toEqual(['before the pause']);
    // Kept while it waits: past its usual expiry, never deleted.
    clock.advance(TEST_DURABLE_SETTINGS.invocationTtlMs + 1000);
    expect(await store.invocations.deleteExpired(clock.now())).toBe(0);

    // The sweeper wakes it once its time came (the clock is past it), and publishes its job.
    published.length = 0;
    const stop = await startSweeper(
      { store, bus, clock, logger: deps.logger, metrics: deps.metrics, files: { sweep: async () => ({ owners: 0, abandoned: 0 }) } as never, callbacks: { kick: () => undefined } },
      { recoverAllAtStart: false, recoverInRounds: false, intervalMs: 60_000, republishAfterMs: 60_000, pools: [], expiryIntervalMs: 600_000, fileGraceMs: 0 },
    );
    try {
      expect(published).toEqual([job(inv.id)]);
      expect((await store.invocations.getState(inv))?.status).toBe('Queued');
    } finally {
      stop();
    }
    runtime.play = async (request) => {
      expect(request.timeoutMs).toBe(10_000 - 250);
      return { kind: 'ok', responseBody: { done: true }, logs: [], durationMs: 1 };
    };
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Completed', attempt: 2, activeMs: 250 });
  });

  it('tells a sync caller\'s gateway that the run suspended, so it waits by partition: never with an outcome', async () => {
    const inv = await created({ mode: 'sync' });
    const replies: CompletionEvent[] = [];
    bus.reply = async (_to, event) => void replies.push(event);
    const until = clock.now() + 60_000;
    runtime.play = async () => ({ kind: 'suspended', wait: { kind: 'event', name: 'approved', until }, logs: [], durationMs: 1 });
    expect(await runInvocation(deps, job(inv.id), { replyTo: 'gateway', deliveryCount: 1 })).toBe('ack');
    expect(replies).toEqual([expect.objectContaining({ invocationId: inv.id, status: 'Waiting' })]);
    expect(replies[0].finished).toBeUndefined();
  });

  it('a wait past the lifetime limit fails the invocation at once, saying so', async () => {
    const inv = await created();
    const until = inv.createdAt + TEST_DURABLE_SETTINGS.maxLifetimeMs + 1;
    runtime.play = async () => ({ kind: 'suspended', wait: { kind: 'sleep', name: 'forever', until }, logs: [], durationMs: 1 });
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    const final = await store.invocations.get(inv);
    expect(final).toMatchObject({ status: 'Failed', outcome: { error: { title: 'Lifetime exceeded' } } });
    expect(final?.outcome?.status === 'Failed' && final.outcome.error.detail).toMatch(/'forever'.*INVOCATION_MAX_LIFETIME_DAYS/);
  });

  it('a run whose active time is spent fails as timed out, without running', async () => {
    const inv = await created();
    const until = clock.now() + 1000;
    runtime.play = async () => ({ kind: 'suspended', wait: { kind: 'sleep', name: 'pause', until }, logs: [], durationMs: 10_000 });
    await runInvocation(deps, job(inv.id));
    clock.advance(2000);
    expect(await store.invocations.wakeDue(clock.now(), 10)).toHaveLength(1);
    runtime.play = async (request) => ({ kind: 'failed', reason: 'timeout', message: `timeout ${request.timeoutMs}`, logs: [], durationMs: 0 });
    await runInvocation(deps, job(inv.id));
    expect(runtime.runs[1].timeoutMs).toBe(0);
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Failed', outcome: { error: { code: 'timeout' } } });
  });

  it('a journal write whose lease is gone stops the run unrecorded; the new owner goes on', async () => {
    const inv = await created();
    let rejected: unknown;
    runtime.play = async (request) => {
      // Another executor took the invocation over meanwhile (this one's lease ended).
      clock.advance(60_000);
      await store.invocations.requeueExpiredLeases(clock.now());
      await store.invocations.claim(inv, 'w2', 30_000, clock.now());
      await request.durable!.record(sent('send', 1, '"late"')).catch((error) => (rejected = error));
      return { kind: 'failed', reason: 'cancelled', message: 'stopped', logs: [], durationMs: 1 };
    };
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(String(rejected)).toMatch(/lost its lease/);
    expect(runtime.runs[0].cancel?.requested).toBe(true);
    expect(await store.journal.read(inv)).toEqual([]);
    expect(await store.invocations.getState(inv)).toMatchObject({ status: 'Running', attempt: 2 });
  });

  it('a journal limit fails the step with the store\'s message and lets the run go on', async () => {
    const inv = await created();
    const tiny = { ...TEST_DURABLE_SETTINGS, limits: { ...DEFAULT_JOURNAL_LIMITS, maxResultBytes: 8 } };
    let message = '';
    runtime.play = async (request) => {
      await request.durable!.record(sent('big', 1, '"0123456789"')).catch((error: Error) => (message = error.message));
      return { kind: 'ok', responseBody: { message }, logs: [], durationMs: 1 };
    };
    expect(await runInvocation({ ...deps, durable: tiny }, job(inv.id))).toBe('ack');
    expect(message).toMatch(/over the limit of 8 bytes \(STEP_RESULT_MAX_SIZE\)/);
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Completed', steps: 0 });
  });

  it('gives up only after MAX_ATTEMPTS attempts without progress: a run that journals a step counts again from there', async () => {
    const inv = await created();
    const die = (journal: boolean) => async (request: ConnectorRunRequest): Promise<ConnectorRunResult> => {
      if (journal) await request.durable!.record(sent(`step-${runtime.runs.length}`, 1, '1'));
      return untilStopped(request);
    };
    const attempt = async (journal: boolean) => {
      runtime.play = die(journal);
      void runInvocation({ ...deps, leaseMs: 1000 }, job(inv.id));
      await eventually(async () => expect((await store.invocations.getState(inv))?.status).toBe('Running'));
      await new Promise((resolve) => setImmediate(resolve));
      clock.advance(5_000);
      await store.invocations.requeueExpiredLeases(clock.now());
    };
    // maxAttempts 2: two attempts that progress, then two that do not, then the fifth is given up.
    await attempt(true);
    await attempt(true);
    await attempt(false);
    await attempt(false);
    expect(runtime.runs).toHaveLength(4);
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(runtime.runs).toHaveLength(4);
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Failed', outcome: { error: { title: 'Gave up' } } });
    await eventually(() => expect(events.map((e) => e.status)).toContain('Failed'));
  });
});
