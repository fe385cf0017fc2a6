import { SecretUnreadable } from '@gi/auth';
import { DEFAULT_CONNECTOR_LIMITS } from '@gi/domain';
import type { FileStore } from '@gi/domain';
import { createLogger, createMetrics } from '@gi/observability';
import { createFakeStore, ManualClock, newInvocation, TEST_DURABLE_SETTINGS } from '@gi/testing';
import type { JobBus } from '@gi/contracts';
import type { ExecutorDeps } from './executor-deps';
import { IntegrationVersions } from './integration-versions';
import { runInvocation } from './run-invocation';
import { PlayedRuntime } from './played-runtime.fixture';

/**
 * What a run is given and what is recorded of it, on the fake store and a bus that drops what it is sent: the parts the medium
 * tests (SQLite) leave out, the secrets, files, progress, limits and metrics. The connector runtime is scripted.
 */

async function world(overrides: Partial<ExecutorDeps> = {}) {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createFakeStore(clock);
  // What a run sends on the bus is the medium tests' subject; here it is taken and dropped.
  const bus = { publish: jest.fn(async () => {}), reply: jest.fn(async () => {}), publishCompletion: jest.fn(async () => {}) } as unknown as JobBus;
  const runtime = new PlayedRuntime();
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', 'executor', { destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const metrics = createMetrics({ integrationLabels: { enabled: true, limit: 10 } });
  const deps: ExecutorDeps = {
    store,
    bus,
    runtime,
    clock,
    logger,
    metrics,
    ownerId: 'w1',
    leaseMs: 30_000,
    maxAttempts: 3,
    durable: TEST_DURABLE_SETTINGS,
    versions: new IntegrationVersions(store.catalog),
    ...overrides,
  };
  await store.catalog.putEntity('bot-a', 'Order', [], clock.now());
  await store.catalog.deployIntegration('bot-a', 'ack', { entityName: 'Order', code: 'v1', pool: 'default', timeoutSeconds: 5, allowedHosts: [], limits: DEFAULT_CONNECTOR_LIMITS, callbackUrl: null }, clock.now());
  const created = async (overrides: Partial<Parameters<typeof newInvocation>[0]> = {}) => {
    const inv = newInvocation({ createdAt: clock.now(), ...overrides });
    await store.invocations.create(inv);
    return inv;
  };
  const job = (id: string) => ({ kind: 'job' as const, version: 1 as const, botId: 'bot-a', invocationId: id, pool: 'default' });
  const values = async (metric: 'queueWait' | 'outcomes' | 'integrationOutcomes' | 'stepsPerInvocation' | 'jobsInFlight' | 'jobDuration') =>
    (await metrics[metric].get()).values.filter((v) => !('metricName' in v) || (v as { metricName: string }).metricName.endsWith('_count')).map((v) => [v.labels, v.value]);
  return { clock, store, bus, runtime, lines, deps, created, job, values };
}

describe('runInvocation', () => {
  it("hands the run the integration's secrets, and fails it without running when they cannot be opened", async () => {
    const forRun = jest.fn(async () => ({ API_KEY: 'k-1' }));
    const { store, runtime, deps, created, job, lines } = await world({ secrets: { forRun } });
    const inv = await created();
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(forRun).toHaveBeenCalledWith('bot-a', 'ack');
    expect(runtime.runs[0].secrets).toEqual({ API_KEY: 'k-1' });

    forRun.mockRejectedValueOnce(new SecretUnreadable('wrong key'));
    const unreadable = await created();
    expect(await runInvocation(deps, job(unreadable.id))).toBe('ack');
    expect(runtime.runs).toHaveLength(1);
    expect((await store.invocations.get(unreadable))?.outcome).toEqual({
      status: 'Failed',
      error: { code: 'internal', title: 'Secrets unreadable', detail: "The integration's secrets cannot be decrypted with the service's key: wrong key" },
    });
    expect(lines.find((line) => line.level === 50)).toMatchObject({ msg: "the integration's secrets cannot be opened; the invocation fails", invocationId: unreadable.id, err: { message: 'wrong key' } });

    // The store failing is no reason to fail the invocation: the job fails, and is tried again.
    forRun.mockRejectedValueOnce(new Error('database is locked'));
    const later = await created();
    await expect(runInvocation(deps, job(later.id))).rejects.toThrow('database is locked');
    expect((await store.invocations.get(later))?.status).toBe('Running');
  });

  it('runs with no secrets when the executor has no vault', async () => {
    const { runtime, deps, created, job } = await world();
    const inv = await created();
    await runInvocation(deps, job(inv.id));
    expect(runtime.runs[0].secrets).toEqual({});
  });

  it('lets a file transfer read its files, and no other call', async () => {
    const file = { Id: 'f1', FileName: 'order.csv', ContentType: 'text/csv', Size: 5, Sha256: '', PartName: 'file' };
    const read = jest.fn(async () => Buffer.from('a,b,c'));
    const { runtime, deps, created, job } = await world({ files: { read } as unknown as FileStore });
    runtime.play = async (request) => {
      const text = request.readFile ? Buffer.from(await request.readFile('f1', { offset: 0, length: 5 })).toString() : 'no reader';
      return { kind: 'ok', responseBody: { text }, logs: [], durationMs: 1 };
    };
    const upload = await created({ endpoint: 'GenericIntegrationFileTransfer', entity: { RequestParams: '', RequestHeaders: '', RequestBody: {}, ResponseBody: null, RequestFiles: [file] } });
    const plain = await created();
    await runInvocation(deps, job(upload.id));
    await runInvocation(deps, job(plain.id));
    expect(read.mock.calls).toEqual([[expect.objectContaining({ id: upload.id }), 'f1', { offset: 0, length: 5 }]]);
    expect(await Promise.all([upload, plain].map(async (inv) => (await deps.store.invocations.get(inv))?.outcome))).toEqual([
      { status: 'Completed', responseBody: { text: 'a,b,c' } },
      { status: 'Completed', responseBody: { text: 'no reader' } },
    ]);
  });

  it('stores the progress a run reports, and keeps running when it cannot', async () => {
    const { store, runtime, deps, created, job } = await world();
    const inv = await created();
    const setProgress = jest.spyOn(store.invocations, 'setProgress');
    runtime.play = async (request) => {
      request.onProgress!({ percent: 40, message: 'halfway' });
      setProgress.mockRejectedValueOnce(new Error('store down'));
      request.onProgress!({ percent: 80, message: 'nearly' });
      return { kind: 'ok', responseBody: { ok: true }, logs: [], durationMs: 1 };
    };
    expect(await runInvocation(deps, job(inv.id))).toBe('ack');
    expect(setProgress.mock.calls.map(([ref, owner, progress]) => [ref.id, owner, progress])).toEqual([
      [inv.id, 'w1', { percent: 40, message: 'halfway' }],
      [inv.id, 'w1', { percent: 80, message: 'nearly' }],
    ]);
    expect((await store.invocations.get(inv))?.status).toBe('Completed');
  });

  it("fails a run that asks to wait past its invocation's lifetime, naming the wait and the limit in days; a wait up to it suspends", async () => {
    const { store, runtime, deps, created, job } = await world();
    const past = await created();
    const lastMoment = past.createdAt + TEST_DURABLE_SETTINGS.maxLifetimeMs;
    runtime.play = async () => ({ kind: 'suspended', wait: { kind: 'event', name: `${'w'.repeat(100)}x`, until: lastMoment + 1 }, logs: [], durationMs: 1 });
    await runInvocation(deps, job(past.id));
    expect((await store.invocations.get(past))?.outcome).toEqual({
      status: 'Failed',
      error: {
        code: 'connector_failed',
        title: 'Lifetime exceeded',
        detail: `The run asked to wait (event '${'w'.repeat(100)}') until ${new Date(lastMoment + 1).toISOString()}, past the invocation's lifetime limit of 30 day(s) from its acceptance (INVOCATION_MAX_LIFETIME_DAYS).`,
      },
    });

    const within = await created();
    runtime.play = async () => ({ kind: 'suspended', wait: { kind: 'sleep', name: 'nap', until: within.createdAt + TEST_DURABLE_SETTINGS.maxLifetimeMs }, logs: [], durationMs: 1 });
    await runInvocation(deps, job(within.id));
    expect(await store.invocations.get(within)).toMatchObject({ status: 'Waiting', waiting: { name: 'nap' } });
  });

  it('counts the queue wait of a first attempt only, each outcome by code, the time of each run, and the steps of a run that made some', async () => {
    const { clock, store, runtime, deps, created, job, values, lines } = await world();
    const first = await created();
    clock.advance(2500);
    runtime.play = async (request) => {
      await request.durable!.record({ name: 'send', occurrence: 1, attempts: 1, startedAt: 1, status: 'done', resultJson: '1', finishedAt: 2 });
      return { kind: 'raised', title: 'Refused', message: 'no', logs: [], durationMs: 1 };
    };
    let took = performance.now();
    await runInvocation(deps, job(first.id));
    // A second attempt, after its first executor stopped: its wait is not the queue's.
    const again = await created();
    await store.invocations.claim(again, 'gone', 1000, clock.now());
    clock.advance(2000);
    await store.invocations.requeueExpiredLeases(clock.now());
    runtime.play = async () => ({ kind: 'ok', responseBody: {}, logs: [], durationMs: 1 });
    await runInvocation(deps, job(again.id));
    const suspending = await created();
    runtime.play = async () => ({ kind: 'suspended', wait: { kind: 'sleep', name: 'nap', until: clock.now() + 60_000 }, logs: [], durationMs: 1 });
    await runInvocation(deps, job(suspending.id));
    took = performance.now() - took;

    // The first and the suspending run waited 2.5 s and 0 s; the second attempt is not counted.
    expect(await values('queueWait')).toEqual([[{ pool: 'default' }, 2]]);
    expect((await deps.metrics.queueWait.get()).values.find((v) => (v as { metricName?: string }).metricName?.endsWith('_sum'))?.value).toBe(2.5);
    expect(await values('outcomes')).toEqual([
      [{ pool: 'default', status: 'Failed', code: 'connector_error' }, 1],
      [{ pool: 'default', status: 'Completed', code: 'ok' }, 1],
    ]);
    expect(await values('integrationOutcomes')).toEqual([
      [{ bot: 'bot-a', integration: 'ack', status: 'Failed' }, 1],
      [{ bot: 'bot-a', integration: 'ack', status: 'Completed' }, 1],
    ]);
    expect(await values('stepsPerInvocation')).toEqual([[{}, 1]]);
    expect(await values('jobDuration')).toEqual([
      [{ pool: 'default', status: 'Failed' }, 1],
      [{ pool: 'default', status: 'Completed' }, 1],
      [{ pool: 'default', status: 'Waiting' }, 1],
    ]);
    // In seconds, and no longer than the three calls took.
    const seconds = (await deps.metrics.jobDuration.get()).values.filter((v) => (v as { metricName?: string }).metricName?.endsWith('_sum'));
    for (const { value } of seconds) expect(value).toBeLessThanOrEqual(took / 1000);
    // A failure is logged with its code and title; a success is only counted.
    expect(lines.filter((line) => line.msg === 'invocation finished')).toEqual([expect.objectContaining({ level: 30, status: 'Failed', code: 'connector_error', title: 'Refused' })]);
    expect(await values('jobsInFlight')).toEqual([[{ pool: 'default' }, 0]]);
  });
});
