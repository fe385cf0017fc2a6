import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { LocalJobBus } from '@gi/bus-local';
import { DEFAULT_CONNECTOR_LIMITS, unrecordableOutcome } from '@gi/domain';
import { cancelInvocation } from '@gi/use-cases';
import type { ConnectorRunRequest, ConnectorRunResult, ConnectorRuntime, Store, WebhookEntity } from '@gi/domain';
import { finishedStateOf } from '@gi/contracts';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import { IntegrationVersions } from './integration-versions';
import { QUARANTINED, quarantineInHand } from './invocation-in-hand';
import { recoverInvocations } from './recover-invocations';
import { RunningInvocations } from './running-invocations';
import { runInvocation } from './run-invocation';
import { startExecutor } from './executor';
import type { ExecutorDeps } from './executor-deps';
import { createMetrics } from '@gi/observability';
import { createSqliteStore } from '@gi/store-sqlite';
import { eventually, newInvocation, TEST_DURABLE_SETTINGS, ManualClock } from '@gi/testing';

/** The connector runtime is the edge here: a scripted stand-in. */
class ScriptedRuntime implements ConnectorRuntime {
  readonly runs: ConnectorRunRequest[] = [];
  result: ConnectorRunResult = { kind: 'ok', responseBody: { ok: true }, logs: [], durationMs: 1 };
  compile() {
    return { ok: true as const };
  }
  async run(request: ConnectorRunRequest) {
    this.runs.push(request);
    return this.result;
  }
  async close() {}
}

/** Runs until its cancellation is requested, as a connector stuck in a loop would until the engine stops it. */
const untilAborted = (runtime: ScriptedRuntime) => async (request: ConnectorRunRequest): Promise<ConnectorRunResult> => {
  runtime.runs.push(request);
  await new Promise<void>((resolve) => (request.cancel?.requested ? resolve() : request.cancel?.onRequest(resolve)));
  return { kind: 'failed', reason: 'cancelled', message: 'stopped', logs: [], durationMs: 1 };
};

describe('runInvocation (SQLite store, in-process bus)', () => {
  let store: Store;
  let bus: LocalJobBus;
  let runtime: ScriptedRuntime;
  let clock: ManualClock;
  let events: CompletionEvent[];
  let deps: ExecutorDeps;

  beforeEach(async () => {
    clock = new ManualClock();
    store = createSqliteStore(':memory:', clock);
    bus = new LocalJobBus();
    runtime = new ScriptedRuntime();
    events = [];
    await bus.onCompletion((e) => events.push(e));
    deps = { store, bus, runtime, clock, logger: pino({ level: 'silent' }), metrics: createMetrics(), ownerId: 'w1', leaseMs: 30_000, maxAttempts: 3, durable: TEST_DURABLE_SETTINGS, versions: new IntegrationVersions(store.catalog) };
    await store.catalog.putEntity('bot-a', 'Order', [], clock.now());
    await store.catalog.deployIntegration('bot-a', 'ack', { entityName: 'Order', code: 'v1', pool: 'default', timeoutSeconds: 5, allowedHosts: ['x.example'], limits: { ...DEFAULT_CONNECTOR_LIMITS, memoryMiB: 16, cpuSeconds: 2 }, callbackUrl: null }, clock.now());
    await store.catalog.deployIntegration('bot-a', 'ack', { entityName: 'Order', code: 'v2', pool: 'default', timeoutSeconds: 5, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null }, clock.now());
  });
  afterEach(async () => {
    await bus.close();
    await store.close();
  });

  const job = (id: string) => ({ kind: 'job' as const, version: 1 as const, botId: 'bot-a', invocationId: id, pool: 'default' });
  const flush = () => new Promise((resolve) => setImmediate(resolve));
  /** The stored state as a waiter answers it (without the call's mode, which only decides how it waits). */
  const answeredState = async (ref: { botId: string; id: string }) => {
    const { mode: _mode, ...state } = (await store.invocations.getState(ref))!;
    return state;
  };

  it('runs the pinned connector version once, records the outcome and announces it', async () => {
    const inv = newInvocation({ createdAt: clock.now(), integrationVersion: 1 });
    await store.invocations.create(inv);
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(runtime.runs).toHaveLength(1);
    expect(runtime.runs[0]).toMatchObject({ code: 'v1', timeoutMs: 5000, allowedHosts: ['x.example'], entityJson: inv.entityJson, cacheKey: 'bot-a/ack@1' });
    expect(runtime.runs[0].limits).toEqual({ memoryBytes: 16 * 1024 * 1024, cpuMs: 2000, responseBodyBytes: 10 * 1024 * 1024, logBytes: 64 * 1024, pendingCalls: 8 });
    expect((await store.invocations.get(inv))?.outcome).toEqual({ status: 'Completed', responseBody: { ok: true } });
    await flush();
    expect(events).toEqual([expect.objectContaining({ kind: 'completed', version: 1, botId: 'bot-a', invocationId: inv.id, status: 'Completed' })]);
    // What it announces is what it recorded: a waiter answers from the event as it would from the store.
    expect(finishedStateOf(events[0])).toEqual(await answeredState(inv));
  });

  describe('a sync call, whose gateway waits for a direct reply', () => {
    const sync = { replyTo: 'gateway-reply-address', deliveryCount: 1 };
    let replies: CompletionEvent[];
    beforeEach(() => {
      replies = [];
      bus.reply = async (_replyTo, event) => void replies.push(event);
    });

    it('is answered by the reply alone while nobody else waits: no event would be heard', async () => {
      const inv = newInvocation({ createdAt: clock.now(), mode: 'sync' });
      await store.invocations.create(inv);
      expect(await runInvocation(deps, job(inv.id), sync)).toBe('ack');
      await flush();
      expect(replies).toEqual([expect.objectContaining({ invocationId: inv.id, status: 'Completed' })]);
      expect(events).toEqual([]);
    });

    it('is announced to all as well once another waiter marked it watched', async () => {
      const inv = newInvocation({ createdAt: clock.now(), mode: 'sync' });
      await store.invocations.create(inv);
      await store.invocations.watch(inv);
      expect(await runInvocation(deps, job(inv.id), sync)).toBe('ack');
      await flush();
      expect(replies).toHaveLength(1);
      expect(events).toEqual([replies[0]]);
    });

    it('is requeued when its reply alone cannot be sent; the redelivery announces it to all', async () => {
      const inv = newInvocation({ createdAt: clock.now(), mode: 'sync' });
      await store.invocations.create(inv);
      bus.reply = async () => {
        throw new Error('the channel closed');
      };
      expect(await runInvocation(deps, job(inv.id), sync)).toBe('requeue');
      expect((await store.invocations.getState(inv))?.status).toBe('Completed');
      bus.reply = async (_replyTo, event) => void replies.push(event);
      expect(await runInvocation(deps, job(inv.id), { ...sync, deliveryCount: 2 })).toBe('ack');
      await flush();
      expect(replies).toEqual([expect.objectContaining({ invocationId: inv.id, status: 'Completed' })]);
      expect(events).toEqual([replies[0]]);
      expect(runtime.runs).toHaveLength(1);
    });
  });

  it("hands the connector the raw body, writes the lines it hands over while it runs, and records the rest after them, once each", async () => {
    const inv = newInvocation({ createdAt: clock.now(), rawBody: '{"orderId": 7}' });
    await store.invocations.create(inv);
    const line = (message: string) => ({ at: clock.now(), level: 'info' as const, message });
    let finishRun: () => void = () => undefined;
    runtime.run = async (request) => {
      runtime.runs.push(request);
      request.onLogs?.([line('one'), line('two')]);
      await new Promise<void>((resolve) => (finishRun = resolve));
      request.onLogs?.([line('three')]);
      return { kind: 'ok', responseBody: { ok: true }, logs: [line('four')], durationMs: 1 };
    };
    const running = runInvocation(deps, job(inv.id));
    let written = 0;
    for (const deadline = Date.now() + 5000; written === 0 && Date.now() < deadline; await flush()) written = (await store.invocations.get(inv))?.logs.length ?? 0;
    expect(runtime.runs[0].rawBody).toBe('{"orderId": 7}');
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Running', logs: [{ message: 'one', attempt: 1 }, { message: 'two', attempt: 1 }] });
    finishRun();
    expect(await running).toBe('ack');
    const done = await store.invocations.get(inv);
    expect(done?.status).toBe('Completed');
    expect(done?.logs.map((l) => [l.attempt, l.message])).toEqual([
      [1, 'one'],
      [1, 'two'],
      [1, 'three'],
      [1, 'four'],
    ]);
  });

  it('only re-announces a redelivered job of a finished invocation', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    await runInvocation(deps, job(inv.id));
    await runInvocation(deps, job(inv.id));
    expect(runtime.runs).toHaveLength(1);
    await flush();
    expect(events).toHaveLength(2);
  });

  it('stops a running invocation when its cancellation is heard, and runs the next job', async () => {
    const stuck = newInvocation({ createdAt: clock.now() });
    const next = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(stuck);
    await store.invocations.create(next);
    const scripted = runtime.run.bind(runtime);
    runtime.run = (request) => (runtime.runs.length === 0 ? untilAborted(runtime)(request) : scripted(request));
    const executor = await startExecutor(deps, ['default'], 1);
    try {
      await bus.publish(job(stuck.id));
      await bus.publish(job(next.id));
      await eventually(() => runtime.runs.length === 1);
      expect(await cancelInvocation({ invocations: store.invocations, bus, clock }, stuck, 'control-api')).toEqual({ announced: true });
      await eventually(() => runtime.runs.length === 2);
      await eventually(() => events.some((e) => e.invocationId === next.id));
      expect(await store.invocations.get(stuck)).toMatchObject({ status: 'Cancelled', outcome: { status: 'Cancelled', error: { code: 'cancelled' } } });
      expect((await store.invocations.get(next))?.status).toBe('Completed');
      expect(events.filter((e) => e.invocationId === stuck.id)).toEqual([{ kind: 'completed', version: 1, botId: 'bot-a', invocationId: stuck.id, status: 'Cancelled' }]);
    } finally {
      await executor.stop();
    }
  });

  describe('stopping with a drain deadline', () => {
    it('lets runs that end within the deadline finish and record their outcome', async () => {
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const executor = await startExecutor(deps, ['default'], 2);
      await bus.publish(job(inv.id));
      await eventually(() => runtime.runs.length === 1);
      await executor.stop(5_000);
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Completed', attempt: 1 });
    });

    it('hands back the runs still going at the deadline: stopped first, then Queued at once with no lease, the job requeued, nothing recorded', async () => {
      const slow = newInvocation({ createdAt: clock.now(), entity: { RequestParams: 'slow=1', RequestHeaders: '', RequestBody: null, ResponseBody: null } });
      const quick = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(slow);
      await store.invocations.create(quick);
      // The stuck run notes what the store says of its invocation when it is stopped: still its own lease.
      const atStop: unknown[] = [];
      runtime.run = async (request) => {
        if (request.entityJson !== slow.entityJson) return ScriptedRuntime.prototype.run.call(runtime, request);
        const result = await untilAborted(runtime)(request);
        atStop.push(await store.invocations.get(slow).then((current) => [current?.status, current?.leaseOwner]));
        return result;
      };
      const decisions: string[] = [];
      const consume = bus.consume.bind(bus);
      bus.consume = (pool, concurrency, handler) => consume(pool, concurrency, async (message, delivery) => {
        const decision = await handler(message, delivery);
        decisions.push(`${message.invocationId === slow.id ? 'slow' : 'quick'}:${decision}`);
        return decision;
      });
      const executor = await startExecutor(deps, ['default'], 2);
      await bus.publish(job(slow.id));
      await bus.publish(job(quick.id));
      await eventually(() => runtime.runs.length === 2);
      await eventually(() => decisions.includes('quick:ack'));
      await executor.stop(200);
      expect(decisions).toEqual(['quick:ack', 'slow:requeue']);
      expect(atStop).toEqual([['Running', 'w1']]);
      expect(await store.invocations.get(slow)).toMatchObject({ status: 'Queued', leaseOwner: null, leaseUntil: null, attempt: 1, outcome: null });
      expect(await store.invocations.get(quick)).toMatchObject({ status: 'Completed' });
      expect(events.filter((e) => e.invocationId === slow.id)).toEqual([]);
      // Another executor claims it at once, long before the lease would have ended: a new attempt.
      expect(await runInvocation({ ...deps, ownerId: 'w2', runtime: new ScriptedRuntime() }, job(slow.id))).toBe('ack');
      expect(await store.invocations.get(slow)).toMatchObject({ status: 'Completed', attempt: 2, leaseOwner: null });
    });
  });

  it("replies Cancelled directly to a sync caller whose run was cancelled (its wait hears no partition)", async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    runtime.run = untilAborted(runtime);
    const replies: Array<{ replyTo: string; event: CompletionEvent }> = [];
    bus.reply = async (replyTo, event) => void replies.push({ replyTo, event });
    const running = new RunningInvocations();
    const run = runInvocation(deps, job(inv.id), { replyTo: 'gateway-reply-address', deliveryCount: 1 }, running);
    await eventually(() => runtime.runs.length === 1);
    await store.invocations.cancel(inv, { code: 'cancelled', title: 'Invocation cancelled', detail: 'by a test' }, clock.now());
    expect(running.cancel(inv)).toBe(true);
    expect(await run).toBe('ack');
    expect(replies).toEqual([{ replyTo: 'gateway-reply-address', event: { kind: 'completed', version: 1, botId: 'bot-a', invocationId: inv.id, status: 'Cancelled' } }]);
  });

  it('drops the job of an invocation cancelled while it was queued', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    await cancelInvocation({ invocations: store.invocations, bus, clock }, inv, 'caller');
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(runtime.runs).toHaveLength(0);
    expect((await store.invocations.get(inv))?.outcome).toMatchObject({ status: 'Cancelled', error: { detail: 'The invocation was cancelled by its caller before it finished.' } });
  });

  it('stops a run whose lease was lost, even without hearing the cancellation', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    runtime.run = untilAborted(runtime);
    // Heartbeats every second: the first finds the invocation cancelled behind the bus's back.
    const running = runInvocation({ ...deps, leaseMs: 3000 }, job(inv.id));
    await eventually(() => runtime.runs.length === 1);
    await store.invocations.cancel(inv, { code: 'cancelled', title: 'Invocation cancelled', detail: 'quietly' }, clock.now());
    expect(await running).toBe('ack');
    expect((await store.invocations.get(inv))?.outcome).toMatchObject({ status: 'Cancelled', error: { detail: 'quietly' } });
  });

  it('stops a run whose lease ran out while the store could not renew it, and records nothing for it', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    runtime.run = untilAborted(runtime);
    // The store out of reach (a partition): every renewal fails, nothing else of the store is used meanwhile.
    const renewals: number[] = [];
    const invocations = Object.create(store.invocations) as Store['invocations'];
    invocations.renewLease = async (_ref, _owner, _leaseMs, now) => {
      renewals.push(now);
      throw new Error('connection timed out');
    };
    const running = runInvocation({ ...deps, store: { ...store, invocations }, leaseMs: 3000 }, job(inv.id));
    await eventually(() => renewals.length === 1);
    // Still within the lease: the failed renewal alone does not stop the run.
    expect(runtime.runs).toHaveLength(1);
    expect(runtime.runs[0].cancel?.requested).toBe(false);
    clock.advance(3000);
    expect(await running).toBe('ack');
    expect(runtime.runs[0].cancel?.requested).toBe(true);
    // Nothing recorded: the invocation is left Running under the expired lease, for the sweeper to requeue.
    const stored = await store.invocations.get(inv);
    expect([stored?.status, stored?.outcome, stored?.leaseOwner]).toEqual(['Running', null, 'w1']);
    expect(events).toEqual([]);
  });

  it('has the callback of a finished invocation sent at once, and only when it has one', async () => {
    const kicks: string[] = [];
    const withCallback = newInvocation({ createdAt: clock.now(), callbackUrl: 'https://hooks.example.com/x' });
    const without = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(withCallback);
    await store.invocations.create(without);
    const callbacks = { kick: () => kicks.push('kick') };
    await runInvocation({ ...deps, callbacks }, job(without.id));
    expect(kicks).toEqual([]);
    await runInvocation({ ...deps, callbacks }, job(withCallback.id));
    expect(kicks).toEqual(['kick']);
    expect(await store.invocations.takeDueCallbacks(clock.now(), 1000, 10)).toEqual([{ botId: 'bot-a', id: withCallback.id }]);
  });

  it('acks jobs of unknown invocations and of another bot', async () => {
    expect(await runInvocation(deps, job('missing'))).toBe('ack');
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    expect(await runInvocation(deps, { ...job(inv.id), botId: 'bot-b' })).toBe('ack');
    expect(runtime.runs).toHaveLength(0);
  });

  it('discards the outcome of an attempt whose lease was taken over', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    runtime.run = async (request) => {
      runtime.runs.push(request);
      // Meanwhile the lease expires and another executor claims the invocation.
      await store.invocations.claim(inv, 'w2', 30_000, clock.now() + 60_000);
      return runtime.result;
    };
    await runInvocation(deps, job(inv.id));
    expect((await store.invocations.get(inv))?.status).toBe('Running');
    expect((await store.invocations.get(inv))?.leaseOwner).toBe('w2');
  });

  it('gives up as Failed once the attempts are used up', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    for (let i = 0; i < 3; i++) {
      await store.invocations.claim(inv, `crashed-${i}`, 1000, clock.now());
      clock.advance(2000);
    }
    await runInvocation(deps, job(inv.id));
    expect(runtime.runs).toHaveLength(0);
    const failed = await store.invocations.get(inv);
    expect(failed?.outcome).toMatchObject({ status: 'Failed', error: { code: 'connector_failed', title: 'Gave up' } });
  });

  it('fails clearly when the pinned version is gone', async () => {
    const inv = newInvocation({ createdAt: clock.now(), integrationVersion: 9 });
    await store.invocations.create(inv);
    await runInvocation(deps, job(inv.id));
    expect((await store.invocations.get(inv))?.outcome).toMatchObject({ status: 'Failed', error: { title: 'Integration missing' } });
  });

  it('records a poison job as Failed and dead-letters it on its last delivery', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gi-poison-'));
    const file = join(dir, 'store.db');
    const fileStore = createSqliteStore(file, clock);
    const poisoned = newInvocation({ createdAt: clock.now() });
    const healthy = newInvocation({ createdAt: clock.now() });
    await fileStore.catalog.putEntity('bot-a', 'Order', [], clock.now());
    await fileStore.catalog.deployIntegration('bot-a', 'ack', { entityName: 'Order', code: 'v1', pool: 'default', timeoutSeconds: 5, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null }, clock.now());
    // Created by another process (a store claims what it created itself without reading the row back).
    const gateway = createSqliteStore(file, clock);
    await gateway.invocations.create(poisoned);
    await gateway.invocations.create(healthy);
    await gateway.close();
    // A corrupt record: claiming it always throws (a claim hands the stored row on without decoding it,
    // so the fault is made at the store's edge).
    const claim = fileStore.invocations.claim.bind(fileStore.invocations);
    fileStore.invocations.claim = (ref, ...rest) => (ref.id === poisoned.id ? Promise.reject(new Error('database disk image is malformed')) : claim(ref, ...rest));
    const executor = await startExecutor({ ...deps, store: fileStore, maxAttempts: 3 }, ['default'], 2);
    try {
      await bus.publish(job(poisoned.id));
      await bus.publish(job(healthy.id));
      await eventually(() => bus.deadLetters.length === 1, 5000);
      expect(bus.deadLetters[0].invocationId).toBe(poisoned.id);
      const summaries = await fileStore.invocations.list('bot-a', { limit: 10 });
      expect(summaries.find((s) => s.id === poisoned.id)).toMatchObject({ status: 'Failed', error: { title: 'Gave up' } });
      expect(summaries.find((s) => s.id === healthy.id)).toMatchObject({ status: 'Completed' });
    } finally {
      await executor.stop();
      await fileStore.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('records a result the store cannot serialise as Failed, announces it, and never leaves it Running', async () => {
    const inv = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(inv);
    // A runtime that lets through what the sandbox would not: a body 100,000 levels deep.
    runtime.result = { kind: 'ok', responseBody: JSON.parse('['.repeat(100_000) + ']'.repeat(100_000)), logs: [], durationMs: 1 };
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(await store.invocations.get(inv)).toMatchObject({ status: 'Failed', outcome: unrecordableOutcome });
    await flush();
    expect(events).toEqual([expect.objectContaining({ kind: 'completed', version: 1, botId: 'bot-a', invocationId: inv.id, status: 'Failed' })]);
    expect(finishedStateOf(events[0])).toEqual(await answeredState(inv));
  });

  describe('when the announcement of a recorded outcome fails (the broker restarting)', () => {
    /** The bus, except that its first `failures` completion publishes fail. */
    const flakyBus = (failures: number): JobBus => {
      let left = failures;
      return new Proxy(bus, {
        get: (target, name, receiver) =>
          name === 'publishCompletion'
            ? (event: CompletionEvent) => (left-- > 0 ? Promise.reject(new Error('channel closed')) : target.publishCompletion(event))
            : Reflect.get(target, name, receiver),
      });
    };
    /** A logger whose lines are kept. */
    const recordingLogger = () => {
      const lines: Array<{ level: number; msg: string }> = [];
      const logger = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
      return { logger, lines };
    };

    it('warns (no error), requeues the job, and its redelivery announces the outcome without running it again', async () => {
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const { logger, lines } = recordingLogger();
      const flaky = { ...deps, bus: flakyBus(2), logger };
      expect(await runInvocation(flaky, job(inv.id))).toBe('requeue');
      expect((await store.invocations.get(inv))?.status).toBe('Completed');
      // The redelivery finds it finished; its announcement fails too, and it is requeued again.
      expect(await runInvocation(flaky, job(inv.id))).toBe('requeue');
      expect(await runInvocation(flaky, job(inv.id))).toBe('ack');
      await flush();
      expect(events).toEqual([expect.objectContaining({ kind: 'completed', version: 1, botId: 'bot-a', invocationId: inv.id, status: 'Completed' })]);
      // The redelivery announces what the store holds.
      expect(finishedStateOf(events[0])).toEqual(await answeredState(inv));
      expect(runtime.runs).toHaveLength(1);
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
      expect(lines.filter((l) => l.level === 40).map((l) => l.msg)).toEqual(Array(2).fill('outcome recorded, but its announcement failed; the job is requeued to announce it again'));
    });

    it('through the executor: the outcome is announced by the redelivery, and nothing is logged as a failed job', async () => {
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      const { logger, lines } = recordingLogger();
      const executor = await startExecutor({ ...deps, bus: flakyBus(1), logger }, ['default'], 1);
      try {
        await bus.publish(job(inv.id));
        await eventually(() => events.some((e) => e.invocationId === inv.id), 5000);
        expect(runtime.runs).toHaveLength(1);
        expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).toEqual([]);
      } finally {
        await executor.stop();
      }
    });
  });

  describe('crash attribution', () => {
    it('blames the one invocation in hand (its first run), from callbacks its run scheduled; nothing outside', async () => {
      const inv = newInvocation({ createdAt: clock.now() });
      await store.invocations.create(inv);
      let inHand: ReturnType<typeof quarantineInHand> = null;
      runtime.run = async (request) => {
        runtime.runs.push(request);
        // What a fatal error's handler would do, from a callback the run's handling scheduled.
        inHand = await new Promise((resolve) => setImmediate(() => resolve(quarantineInHand(deps))));
        return runtime.result;
      };
      await runInvocation(deps, job(inv.id));
      expect(inHand).toMatchObject({ ref: { botId: 'bot-a', id: inv.id } });
      expect(await inHand!.recorded).toBe(true);
      // Quarantined before its outcome could be recorded: Failed, and never run again.
      expect(await store.invocations.get(inv)).toMatchObject({ status: 'Failed', outcome: { status: 'Failed', error: QUARANTINED } });
      expect(quarantineInHand(deps)).toBeNull();
      expect(await runInvocation(deps, job(inv.id))).toBe('ack');
      expect(runtime.runs).toHaveLength(1);
    });

    it('blames a re-run by its context whatever else is in hand, and no first run that was not alone', async () => {
      const entity = (name: string) => ({ RequestParams: name, RequestHeaders: '', RequestBody: {}, ResponseBody: null });
      const first = newInvocation({ createdAt: clock.now(), entity: entity('first') });
      const rerun = newInvocation({ createdAt: clock.now(), entity: entity('rerun') });
      await store.invocations.create(first);
      await store.invocations.create(rerun);
      // Its previous attempt was cut short: the executor running it died and its lease ran out.
      await store.invocations.claim(rerun, 'died', 1000, clock.now());
      clock.advance(2000);
      const blamed = new Map<string, string | null>();
      let arrived = 0;
      let bothInHand!: () => void;
      const together = new Promise<void>((resolve) => (bothInHand = resolve));
      runtime.run = async (request) => {
        runtime.runs.push(request);
        if (++arrived === 2) bothInHand();
        await together;
        const quarantined = await new Promise<ReturnType<typeof quarantineInHand>>((resolve) => setImmediate(() => resolve(quarantineInHand(deps))));
        blamed.set((JSON.parse(request.entityJson ?? 'null') as WebhookEntity).RequestParams, quarantined?.ref.id ?? null);
        await quarantined?.recorded;
        return runtime.result;
      };
      await Promise.all([runInvocation(deps, job(first.id)), runInvocation(deps, job(rerun.id))]);
      expect(Object.fromEntries(blamed)).toEqual({ first: null, rerun: rerun.id });
      expect((await store.invocations.get(rerun))?.outcome).toEqual({ status: 'Failed', error: QUARANTINED });
      expect((await store.invocations.get(first))?.status).toBe('Completed');
      // With no re-run in hand any more, nothing is carried through promises (and nothing costs).
      expect(quarantineInHand(deps)).toBeNull();
    });
  });

  it('recovers expired leases and unpublished invocations, publishing each once', async () => {
    const running = newInvocation({ createdAt: clock.now() });
    const queued = newInvocation({ createdAt: clock.now() });
    await store.invocations.create(running);
    await store.invocations.create(queued);
    await store.invocations.claim(running, 'dead', 1000, clock.now());
    clock.advance(120_000);
    const published: string[] = [];
    await bus.consume('default', 10, async (j) => {
      published.push(j.invocationId);
      return 'ack';
    });
    const first = await recoverInvocations(deps, { leaseBefore: clock.now(), publishedBefore: clock.now() - 60_000 });
    const second = await recoverInvocations(deps, { leaseBefore: clock.now(), publishedBefore: clock.now() - 60_000 });
    await flush();
    expect(first).toEqual({ requeued: 1, republished: 2 });
    expect(second).toEqual({ requeued: 0, republished: 0 });
    expect(published.sort()).toEqual([running.id, queued.id].sort());
  });
});
