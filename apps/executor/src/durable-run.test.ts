import { SpanStatusCode } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { DEFAULT_JOURNAL_LIMITS, JournalLimitExceeded } from '@gi/domain';
import type { ClaimedInvocation, Store } from '@gi/domain';
import { createMetrics, tracingEnabled } from '@gi/observability';
import { createFakeStore, ManualClock, newInvocation, TEST_DURABLE_SETTINGS } from '@gi/testing';
import { durableRunOf } from './durable-run';
import type { JournalFailure } from './durable-run';

// Tracing is off unless a test turns it on (as startTracing would, with an exporter named).
jest.mock('@gi/observability', () => ({ ...jest.requireActual('@gi/observability'), tracingEnabled: jest.fn(() => false) }));

const step = (name: string, occurrence = 1) => ({ name, occurrence, attempts: 1, startedAt: 1, status: 'done' as const, resultJson: '"ok"', finishedAt: 2 });

/** A claimed invocation on the fake store, with the journal the executor gives its run and the failures it reports. */
async function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createFakeStore(clock);
  const metrics = createMetrics();
  const created = newInvocation({ createdAt: clock.now() });
  await store.invocations.create(created);
  const claim = async () => (await store.invocations.claim(created, 'w1', 60_000, clock.now()))!;
  const failures: Array<[JournalFailure, unknown]> = [];
  const durableOf = (invocation: ClaimedInvocation, journalStore: Store = store) =>
    durableRunOf({ store: journalStore, metrics, ownerId: 'w1', clock }, invocation, TEST_DURABLE_SETTINGS, (why, error) => void failures.push([why, error]));
  const stepCounts = async () => Object.fromEntries((await metrics.steps.get()).values.map((v) => [`${v.labels.kind}/${v.labels.status}`, v.value]));
  return { clock, store, claim, failures, durableOf, stepCounts };
}

describe('durableRunOf', () => {
  it("hands the run its journal and settings, reading the journal only when the invocation has steps", async () => {
    const { store, claim, durableOf } = await world();
    const read = jest.spyOn(store.journal, 'read');
    const first = await claim();
    const { durable } = await durableOf(first);
    expect(read).not.toHaveBeenCalled();
    expect(durable).toMatchObject({ botId: 'bot-a', invocationId: first.id, journal: [], limits: DEFAULT_JOURNAL_LIMITS, suspendAfterMs: TEST_DURABLE_SETTINGS.suspendAfterMs });
    await durable.record(step('send'));

    // The next attempt, once the lease of the first ran out, is handed what the first journalled.
    await store.invocations.releaseLease(first, 'w1');
    const again = await durableOf(await claim());
    expect(read).toHaveBeenCalledTimes(1);
    expect(again.durable.journal).toEqual([expect.objectContaining({ name: 'send', occurrence: 1, status: 'done', resultJson: '"ok"' })]);
    expect(again.steps()).toBe(1);
  });

  it('counts each step once, by name and occurrence, and the steps written by kind and status', async () => {
    const { clock, claim, durableOf, stepCounts } = await world();
    const { durable, steps } = await durableOf(await claim());
    expect(steps()).toBe(0);
    await durable.record(step('send', 1));
    await durable.record(step('send', 2));
    // The same step journalled again (its retry) is not another step.
    await durable.record(step('send', 2));
    await durable.beginWait({ kind: 'sleep', name: 'nap', occurrence: 1, startedAt: clock.now(), until: clock.now() + 60_000 });
    expect(steps()).toBe(3);
    expect(await stepCounts()).toEqual({ 'step/done': 3, 'sleep/waiting': 1 });
  });

  it("times a wait out at the clock's time", async () => {
    const { clock, store, claim, durableOf } = await world();
    const { durable } = await durableOf(await claim());
    await durable.beginWait({ kind: 'event', name: 'approved', occurrence: 1, startedAt: clock.now(), until: clock.now() + 60_000 });
    const timeOut = jest.spyOn(store.journal, 'timeOut');
    clock.advance(60_000);
    expect(await durable.timeOut({ name: 'approved', occurrence: 1 })).toMatchObject({ name: 'approved', status: 'done' });
    expect(timeOut.mock.calls[0][3]).toBe(clock.now());
  });

  it('stops the run when a write finds the lease gone, and when the store fails; a journal limit fails the step alone', async () => {
    const { store, claim, failures, durableOf, stepCounts } = await world();
    const invocation = await claim();
    const down = new Error('disk I/O error');
    const limit = new JournalLimitExceeded('The journal holds at most 1,000 steps.');
    const record = jest.spyOn(store.journal, 'record').mockResolvedValueOnce(null).mockRejectedValueOnce(down).mockRejectedValueOnce(limit);
    const { durable, steps } = await durableOf(invocation);

    await expect(durable.record(step('a'))).rejects.toThrow('The run lost its lease; it stops.');
    await expect(durable.record(step('b'))).rejects.toThrow('The journal could not be written (the store failed); the run stops and is tried again.');
    await expect(durable.record(step('c'))).rejects.toBe(limit);

    expect(failures).toEqual([
      ['lease-lost', undefined],
      ['store-failed', down],
    ]);
    expect(record).toHaveBeenCalledTimes(3);
    expect(steps()).toBe(0);
    expect(await stepCounts()).toEqual({});
  });
});

describe('durableRunOf with tracing on', () => {
  const exporter = new InMemorySpanExporter();
  const sdk = new NodeSDK({ spanProcessors: [new SimpleSpanProcessor(exporter)], metricReaders: [], logRecordProcessors: [], autoDetectResources: false });
  beforeAll(() => sdk.start());
  afterAll(() => sdk.shutdown());
  beforeEach(() => jest.mocked(tracingEnabled).mockReturnValue(true));
  afterEach(() => jest.mocked(tracingEnabled).mockReturnValue(false));

  it('makes each journalled step a span from its start to its end, an error when it failed or is retried', async () => {
    const { clock, claim, durableOf } = await world();
    const { durable } = await durableOf(await claim());
    // Times as the sandbox records them: milliseconds since the epoch.
    const t = Date.now() - 1000;
    await durable.record({ ...step('send'), startedAt: t, finishedAt: t + 250 });
    await durable.record({ name: 'charge', occurrence: 2, attempts: 3, startedAt: t + 300, status: 'failed', error: { name: 'Declined', message: 'no' }, finishedAt: t + 400 });
    const before = Date.now();
    await durable.record({ name: 'refund', occurrence: 1, attempts: 1, startedAt: t + 500, status: 'retrying', error: { name: 'Timeout', message: 'slow' }, until: t + 9000 });
    await durable.beginWait({ kind: 'sleep', name: 'nap', occurrence: 1, startedAt: clock.now(), until: clock.now() + 60_000 });

    const ms = ([seconds, nanos]: [number, number]) => Math.round(seconds * 1000 + nanos / 1e6);
    const spans = exporter.getFinishedSpans().map((span) => ({ name: span.name, attributes: span.attributes, status: span.status, start: ms(span.startTime), end: ms(span.endTime) }));
    expect(spans.slice(0, 2)).toEqual([
      {
        name: 'step send',
        attributes: { 'gi.step.name': 'send', 'gi.step.occurrence': 1, 'gi.step.kind': 'step', 'gi.step.status': 'done', 'gi.step.attempts': 1 },
        status: { code: SpanStatusCode.UNSET },
        start: t,
        end: t + 250,
      },
      {
        name: 'step charge',
        attributes: { 'gi.step.name': 'charge', 'gi.step.occurrence': 2, 'gi.step.kind': 'step', 'gi.step.status': 'failed', 'gi.step.attempts': 3 },
        status: { code: SpanStatusCode.ERROR, message: 'Declined' },
        start: t + 300,
        end: t + 400,
      },
    ]);
    // A step to be retried, and a wait begun, have no end yet: their spans end when they were written.
    expect(spans.slice(2)).toEqual([
      expect.objectContaining({ name: 'step refund', start: t + 500, status: { code: SpanStatusCode.ERROR, message: 'Timeout' } }),
      expect.objectContaining({ name: 'step nap', attributes: expect.objectContaining({ 'gi.step.kind': 'sleep', 'gi.step.status': 'waiting' }), status: { code: SpanStatusCode.UNSET } }),
    ]);
    for (const span of spans.slice(2)) expect(span.end).toBeGreaterThanOrEqual(before);
  });
});
