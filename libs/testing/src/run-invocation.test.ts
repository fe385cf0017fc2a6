import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { LocalJobBus } from '@gi/bus-local';
import { cancelInvocation, DEFAULT_CONNECTOR_LIMITS } from '@gi/domain';
import type { CompletionEvent, ConnectorRunRequest, ConnectorRunResult, ConnectorRuntime, Store } from '@gi/domain';
import { IntegrationVersions, recoverInvocations, runInvocation, startExecutor } from '@gi/executor';
import type { ExecutorDeps } from '@gi/executor';
import { createMetrics } from '@gi/http';
import { createSqliteStore } from '@gi/store-sqlite';
import { eventually } from './bus.contract';
import { newInvocation } from './fixtures';
import { ManualClock } from './manual-clock';

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

/** Runs until its signal aborts, as a connector stuck in a loop would until the engine stops it. */
const untilAborted = (runtime: ScriptedRuntime) => async (request: ConnectorRunRequest): Promise<ConnectorRunResult> => {
  runtime.runs.push(request);
  await new Promise<void>((resolve) => (request.signal?.aborted ? resolve() : request.signal?.addEventListener('abort', () => resolve())));
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
    deps = { store, bus, runtime, clock, logger: pino({ level: 'silent' }), metrics: createMetrics(), ownerId: 'w1', leaseMs: 30_000, maxAttempts: 3, versions: new IntegrationVersions(store.catalog) };
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

  it('runs the pinned connector version once, records the outcome and announces it', async () => {
    const inv = newInvocation({ createdAt: clock.now(), integrationVersion: 1 });
    await store.invocations.create(inv);
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(runtime.runs).toHaveLength(1);
    expect(runtime.runs[0]).toMatchObject({ code: 'v1', timeoutMs: 5000, allowedHosts: ['x.example'], entity: inv.entity, cacheKey: 'bot-a/ack@1' });
    expect(runtime.runs[0].limits).toEqual({ memoryBytes: 16 * 1024 * 1024, cpuMs: 2000, responseBodyBytes: 10 * 1024 * 1024, logBytes: 64 * 1024, pendingCalls: 8 });
    expect((await store.invocations.get(inv))?.outcome).toEqual({ status: 'Completed', responseBody: { ok: true } });
    await flush();
    expect(events).toEqual([{ kind: 'completed', version: 1, botId: 'bot-a', invocationId: inv.id, status: 'Completed' }]);
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
    // A corrupt record: reading it always throws.
    const raw = new Database(file);
    raw.prepare('UPDATE invocations SET entity = ? WHERE id = ?').run('{not json', poisoned.id);
    raw.close();
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
