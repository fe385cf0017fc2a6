import type { CompletionEvent, JobMessage } from '@gi/contracts';
import type { WaitReason } from '@gi/domain';
import { createLogger } from '@gi/observability';
import { createFakeStore, ManualClock, newInvocation, TEST_DURABLE_SETTINGS } from '@gi/testing';
import type { ExecutorDeps } from './executor-deps';
import { RunLog } from './run-log';
import { suspendRun } from './suspend-run';

/** A claimed invocation of pool 'fast' on the fake store, and a bus and log that note what they are given. */
async function world() {
  const clock = new ManualClock(1_700_000_000_000);
  const store = createFakeStore(clock);
  const published: JobMessage[] = [];
  const replies: Array<[string, CompletionEvent]> = [];
  const bus = {
    publish: jest.fn(async (job: JobMessage) => void published.push(job)),
    reply: async (replyTo: string, event: CompletionEvent) => void replies.push([replyTo, event]),
    publishCompletion: async () => undefined,
  };
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('debug', 'executor', { destination: { write: (line: string) => void lines.push(JSON.parse(line)) } });
  const deps = { store, bus, clock, logger, ownerId: 'w1', durable: TEST_DURABLE_SETTINGS } as unknown as ExecutorDeps;
  const created = newInvocation({ createdAt: clock.now() - 5000, pool: 'fast' });
  await store.invocations.create(created);
  const invocation = (await store.invocations.claim(created, 'w1', 60_000, clock.now()))!;
  const log = new RunLog(logger, invocation);
  return { clock, store, bus, published, replies, lines, deps, invocation, log };
}

const sleep = (until: number): WaitReason => ({ kind: 'sleep', name: 'nap', until });
const messages = (lines: Array<Record<string, unknown>>) => lines.map((line) => line.msg);

describe('suspendRun', () => {
  it('leaves the invocation Waiting with no lease, kept past its lifetime, and tells a sync caller Waiting', async () => {
    const { clock, store, published, replies, lines, deps, invocation, log } = await world();
    const until = clock.now() + 3600_000;

    expect(await suspendRun(deps, invocation, sleep(until), 1500, log, { replyTo: 'gateway-1', deliveryCount: 1 })).toBe('ack');

    expect(await store.invocations.get(invocation)).toMatchObject({
      status: 'Waiting',
      waiting: sleep(until),
      leaseOwner: null,
      activeMs: 1500,
      expireAt: invocation.createdAt + TEST_DURABLE_SETTINGS.maxLifetimeMs + TEST_DURABLE_SETTINGS.invocationTtlMs,
    });
    expect(replies).toEqual([['gateway-1', expect.objectContaining({ invocationId: invocation.id, status: 'Waiting' })]]);
    expect(published).toEqual([]);
    expect(lines).toEqual([expect.objectContaining({ level: 20, wait: 'sleep', step: 'nap', until: new Date(until).toISOString(), msg: 'run suspended' })]);
  });

  it('publishes the job again at once to its pool when an event completed the wait while the run stopped', async () => {
    const { clock, store, published, replies, deps, invocation, log } = await world();
    // The event wait has no waiting entry in the journal: the event was stored while the run was stopping.
    const wait: WaitReason = { kind: 'event', name: 'approved', until: clock.now() + 60_000 };

    expect(await suspendRun(deps, invocation, wait, 10, log)).toBe('ack');

    expect(await store.invocations.get(invocation)).toMatchObject({ status: 'Queued', waiting: null });
    expect(published).toEqual([{ kind: 'job', version: 1, botId: 'bot-a', invocationId: invocation.id, pool: 'fast' }]);
    // An async call: no gateway to tell.
    expect(replies).toEqual([]);
  });

  it('requeues this job when the resumed one cannot be published', async () => {
    const { clock, bus, lines, deps, invocation, log } = await world();
    const down = new Error('broker unreachable');
    bus.publish.mockRejectedValueOnce(down);

    expect(await suspendRun(deps, invocation, { kind: 'event', name: 'approved', until: clock.now() + 60_000 }, 10, log)).toBe('requeue');

    expect(lines.at(-1)).toMatchObject({ level: 40, err: { message: 'broker unreachable' }, msg: 'the resumed job could not be published; this job is requeued instead' });
  });

  it('lets go of a run whose lease was lost before it could suspend: nothing told, nothing published', async () => {
    const { clock, store, published, replies, lines, deps, invocation, log } = await world();
    await store.invocations.cancel(invocation, { code: 'cancelled', title: 'Cancelled', detail: 'By the caller.' }, clock.now());

    expect(await suspendRun(deps, invocation, sleep(clock.now() + 3600_000), 10, log, { replyTo: 'gateway-1', deliveryCount: 1 })).toBe('ack');

    expect(await store.invocations.get(invocation)).toMatchObject({ status: 'Cancelled' });
    expect([published, replies]).toEqual([[], []]);
    expect(messages(lines)).toEqual(['lease lost before the run could be suspended; whoever holds the invocation now goes on with it']);
  });
});
