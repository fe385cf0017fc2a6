import { completionEvent } from '@gi/contracts';
import type { CompletionEvent, JobDelivery } from '@gi/contracts';
import { CompletionWaiter, isTerminal } from '@gi/domain';
import type { InvocationRef, InvocationState, StoredInvocationState } from '@gi/domain';
import { createFakeStore, ManualClock, newInvocation } from '@gi/testing';
import { cancelInvocation } from '../cancel-invocation';
import { announceRecorded, awaitFinished, LATE_WATCH_MS, RECENT_MS, RelayLedger, replyCancelled, replySuspended, syncCallWait, watchDelayOf } from './completion-routing';

/**
 * The ordering rules of completion routing (the tables of completion-routing.ts), one case each. Each
 * case plays the race its rule closes, so it fails when the rule is broken: the completion is then
 * lost, and the wait is still going once everything in flight has settled (it would end only at its
 * deadline, with a read of the store).
 */

const DONE = { status: 'Completed' as const, responseBody: { ok: true } };
const LOG = { warn: () => undefined };

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A model of the broker between the processes of one invocation: a direct reply reaches the process it
 * was asked by, while the connection it was asked on lives; an event by partition reaches the processes
 * that have bound the invocation's partition. Binding takes a turn (a broker round trip). A reply that
 * is no outcome (`Waiting`) promotes that process's standby watch, as the RabbitMQ bus does; so does a
 * lost connection (`loseConnection`).
 */
class Broker {
  readonly sent: string[] = [];
  /** The seam of the bus's own rule: a promoted wait is bound first, then told. */
  tellBeforeBinding = false;
  private readonly processes = new Map<string, WaitingProcess>();

  process(name: string): WaitingProcess {
    const process = new WaitingProcess(name, this);
    this.processes.set(name, process);
    return process;
  }

  readonly bus = {
    reply: async (replyTo: string, event: CompletionEvent): Promise<void> => {
      this.sent.push(`reply ${event.status}`);
      const to = this.processes.get(replyTo);
      // Direct replies are unconfirmed: one to a lost connection goes nowhere, and nobody hears of it.
      if (!to || to.connectionLost) return;
      if (isTerminal(event.status)) to.waiter.notify(event);
      else await to.promote(event.invocationId);
    },
    publishCompletion: async (event: CompletionEvent): Promise<void> => {
      this.sent.push(`publish ${event.status}`);
      for (const process of this.processes.values()) if (process.bound.has(event.invocationId)) process.waiter.notify(event);
    },
    publishCancel: async (): Promise<void> => undefined,
  };
}

/** A process that waits for completions (a gateway, a results replica): its waiter, its bindings, its standby watches. */
class WaitingProcess {
  readonly bound = new Set<string>();
  readonly standby = new Map<string, () => void>();
  connectionLost = false;
  readonly waiter = new CompletionWaiter<CompletionEvent>(async (invocationId, { directReply, onPromoted }) => {
    if (directReply) this.standby.set(invocationId, onPromoted ?? (() => undefined));
    else await this.bind(invocationId);
    return { release: () => void (this.bound.delete(invocationId), this.standby.delete(invocationId)) };
  });

  constructor(
    readonly name: string,
    private readonly broker: Broker,
  ) {}

  /** Its job's direct reply can no longer come (RabbitMQ: the connection is lost): its waits are promoted. */
  async loseConnection(): Promise<void> {
    this.connectionLost = true;
    await Promise.all([...this.standby.keys()].map((id) => this.promote(id)));
  }

  async promote(invocationId: string): Promise<void> {
    const told = this.standby.get(invocationId);
    if (!told) return;
    this.standby.delete(invocationId);
    if (this.broker.tellBeforeBinding) {
      told();
      await this.bind(invocationId);
    } else {
      await this.bind(invocationId);
      told();
    }
  }

  private async bind(invocationId: string): Promise<void> {
    await turn();
    this.bound.add(invocationId);
  }
}

/** The moments of a waiter's store calls, where a test makes the run finish (once). */
interface Interleave {
  afterRead?: () => Promise<unknown>;
  beforeMark?: () => Promise<unknown>;
  afterMark?: () => Promise<unknown>;
}

/**
 * One invocation, running (claimed by executor `w1`), with a gateway and a results replica waiting
 * for it over the broker model, on the fake store of the small tests.
 */
async function world(mode: 'sync' | 'async') {
  const clock = new ManualClock();
  const store = createFakeStore(clock);
  const invocation = newInvocation({ createdAt: clock.now(), mode });
  await store.invocations.create(invocation);
  const ref: InvocationRef = { botId: invocation.botId, id: invocation.id };
  const claimed = await store.invocations.claim(ref, 'w1', 60_000, clock.now());
  const broker = new Broker();
  const gateway = broker.process('gateway');
  const results = broker.process('results');
  const deps = { bus: broker.bus, logger: LOG };
  /** The job as its executor got it: a sync call's asks for a direct reply to its gateway. */
  const job: JobDelivery = mode === 'sync' ? { replyTo: gateway.name, deliveryCount: 1 } : { deliveryCount: 1 };
  const cancels: Array<() => void> = [];
  const interleave: Interleave = {};
  const once = (key: keyof Interleave) => {
    const action = interleave[key];
    delete interleave[key];
    return action?.();
  };
  const invocations = {
    getState: async (asked: InvocationRef): Promise<StoredInvocationState | null> => {
      const state = await store.invocations.getState(asked);
      await once('afterRead');
      return state;
    },
    watch: async (asked: InvocationRef): Promise<StoredInvocationState | null> => {
      await once('beforeMark');
      const state = await store.invocations.watch(asked);
      await once('afterMark');
      return state;
    },
  };
  return {
    ref,
    store,
    clock,
    broker,
    gateway,
    results,
    deps,
    job,
    interleave,
    /** The executor records the outcome and announces it, as run-invocation.ts does. */
    finish: async (delivery: JobDelivery | undefined = job) => {
      const completed = await store.invocations.complete(claimed!, 'w1', DONE, [], clock.now());
      return announceRecorded(deps, completionEvent(ref, 'Completed'), LOG, delivery, completed!.watched);
    },
    /** A new sync call's gateway: `publish` plays the job's publication. */
    syncCall: (publish: () => Promise<unknown> = async () => undefined) =>
      awaitFinished({ waiter: gateway.waiter, invocations }, ref, { waitMs: 60_000, hangUp: (cancel) => cancels.push(cancel), ...syncCallWait('new', async () => void (await publish())) }),
    /** A long poll (or a repeat of the sync call) on the results replica. */
    poll: () => awaitFinished({ waiter: results.waiter, invocations }, ref, { waitMs: 60_000, hangUp: (cancel) => cancels.push(cancel) }),
    end: () => cancels.forEach((cancel) => cancel()),
  };
}

type World = Awaited<ReturnType<typeof world>>;
let current: World | undefined;
const open = async (mode: 'sync' | 'async') => (current = await world(mode));
afterEach(() => current?.end());

/** The wait's answer once everything in flight has settled, or 'still waiting' (its completion was lost). */
async function answerNow(wait: Promise<InvocationState | null>): Promise<InvocationState | null | 'still waiting'> {
  let answer: InvocationState | null | 'still waiting' = 'still waiting';
  void wait.then((state) => (answer = state));
  for (let i = 0; i < 20; i++) await turn();
  return answer;
}

describe('completion routing', () => {
  describe('the waiter', () => {
    it('registers the wait before the job is published', async () => {
      const w = await open('sync');
      // An executor so quick that it replies while the job is still being published.
      const wait = w.syncCall(() => w.finish());
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
      expect(w.broker.sent).toEqual(['reply Completed']);
    });

    it('binds the partition before the store is read', async () => {
      const w = await open('async');
      w.interleave.afterRead = () => w.finish();
      expect(await answerNow(w.poll())).toMatchObject({ status: 'Completed' });
    });

    it('marks the watch after the partition is bound', async () => {
      const w = await open('sync');
      w.interleave.afterMark = () => w.finish();
      expect(await answerNow(w.poll())).toMatchObject({ status: 'Completed' });
    });

    it('takes the state from the mark, read after it', async () => {
      const w = await open('sync');
      // Finished between the waiter's first read and its mark: the completion saw no mark, and published nothing.
      w.interleave.beforeMark = () => w.finish();
      expect(await answerNow(w.poll())).toMatchObject({ status: 'Completed' });
      expect(w.broker.sent).toEqual(['reply Completed']);
    });

    it('marks a sync call watched, so its executor publishes the event', async () => {
      const w = await open('sync');
      const wait = w.poll();
      expect(await answerNow(wait)).toBe('still waiting');
      await w.finish();
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
      expect(w.broker.sent).toEqual(['reply Completed', 'publish Completed']);
    });
  });

  describe('a standby watch promoted (its direct reply can no longer come)', () => {
    it('is bound by the bus first, then told', async () => {
      for (const tellBeforeBinding of [false, true]) {
        const w = await open('sync');
        w.broker.tellBeforeBinding = tellBeforeBinding;
        const wait = w.syncCall();
        await answerNow(wait);
        // The run finishes just after the wait's mark: bound by then, or the event is lost.
        w.interleave.afterMark = () => w.finish();
        await w.gateway.loseConnection();
        expect(await answerNow(wait)).toEqual(tellBeforeBinding ? 'still waiting' : expect.objectContaining({ status: 'Completed' }));
        w.end();
      }
    });

    it('marks the invocation watched, so the event is published to it', async () => {
      const w = await open('sync');
      const wait = w.syncCall();
      await w.gateway.loseConnection();
      expect(await answerNow(wait)).toBe('still waiting');
      await w.finish();
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
      expect(w.broker.sent).toEqual(['reply Completed', 'publish Completed']);
    });

    it('ends at once when the mark finds the run finished (its reply was lost)', async () => {
      const w = await open('sync');
      const wait = w.syncCall();
      w.gateway.connectionLost = true;
      await w.finish();
      expect(w.broker.sent).toEqual(['reply Completed']);
      await w.gateway.loseConnection();
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
    });
  });

  describe('the announcer', () => {
    it('always publishes an async outcome', async () => {
      const w = await open('async');
      const wait = w.poll();
      await answerNow(wait);
      await w.finish();
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
      expect(w.broker.sent).toEqual(['publish Completed']);
    });

    it('replies a sync outcome directly, and publishes it only when watched', async () => {
      const w = await open('sync');
      const wait = w.syncCall();
      await answerNow(wait);
      await w.finish();
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
      // Nobody else waits: the broker carries the reply alone. (Watched: see "marks a sync call watched".)
      expect(w.broker.sent).toEqual(['reply Completed']);
    });

    it('requeues the job when a reply sent alone is lost, and only logs it when the event is published too', async () => {
      for (const watched of [false, true]) {
        const w = await open('sync');
        if (watched) await w.store.invocations.watch(w.ref);
        w.broker.bus.reply = async () => Promise.reject(new Error('channel closed'));
        expect(await w.finish()).toBe(watched ? 'ack' : 'requeue');
      }
    });

    it('replies and publishes an outcome announced again (a redelivered job, a give-up): it cannot know who watches', async () => {
      const w = await open('sync');
      await w.finish();
      w.broker.sent.length = 0;
      expect(await announceRecorded(w.deps, completionEvent(w.ref, 'Completed'), LOG, w.job)).toBe('ack');
      expect(w.broker.sent).toEqual(['reply Completed', 'publish Completed']);
    });

    it('replies Cancelled directly to a sync call whose run was cancelled', async () => {
      const w = await open('sync');
      const wait = w.syncCall();
      await answerNow(wait);
      // The canceller records it and publishes its event by partition, which a standby watch does not hear.
      await cancelInvocation({ invocations: w.store.invocations, bus: w.broker.bus, clock: w.clock }, w.ref, 'caller');
      expect(await answerNow(wait)).toBe('still waiting');
      // The executor running it stops the run.
      await replyCancelled(w.deps, w.ref, w.job);
      expect(await answerNow(wait)).toMatchObject({ status: 'Cancelled' });
    });

    it('replies Waiting to a sync call whose run suspended, so its wait hears the run that finishes it', async () => {
      const w = await open('sync');
      const wait = w.syncCall();
      await answerNow(wait);
      await replySuspended(w.deps, w.ref, w.job);
      expect(await answerNow(wait)).toBe('still waiting');
      // The sweeper's job, on any executor: no reply address.
      await w.finish({ deliveryCount: 1 });
      expect(await answerNow(wait)).toMatchObject({ status: 'Completed' });
    });
  });

  describe('the relay between embedded processes', () => {
    const ref = { botId: 'bot-a', id: 'inv-1' };
    const facts = { integrationId: 'ack', attempt: 1, startedAt: 1, finishedAt: 2, responseContentType: 'application/json', outcome: DONE };

    it('asks the others at once for a poll, and only after LATE_WATCH_MS for a sync call whose job runs here', () => {
      expect(watchDelayOf({})).toBe(0);
      expect(watchDelayOf({ runsHere: true, directReply: true })).toBe(LATE_WATCH_MS);
    });

    it('sends a completion, without its facts, to a process that watches it', () => {
      const runner = new RelayLedger();
      expect(runner.watchedElsewhere(ref.id)).toBeNull();
      expect(runner.completedHere(completionEvent(ref, 'Completed', facts))).toEqual(completionEvent(ref, 'Completed'));
    });

    it('answers a watch that arrives within RECENT_MS after the completion', () => {
      let now = 0;
      const runner = new RelayLedger(() => now);
      expect(runner.completedHere(completionEvent(ref, 'Completed'))).toBeNull();
      now += RECENT_MS;
      expect(runner.watchedElsewhere(ref.id)).toEqual(completionEvent(ref, 'Completed'));
    });

    it('sends the completion of an invocation it announced a watch for, so the others forget theirs', () => {
      const runner = new RelayLedger();
      runner.watching(ref.id);
      expect(runner.completedHere(completionEvent(ref, 'Completed'))).toEqual(completionEvent(ref, 'Completed'));
    });

    it('sends nothing for a completion nobody watches, or one another process already sent', () => {
      const runner = new RelayLedger();
      expect(runner.completedHere(completionEvent(ref, 'Completed'))).toBeNull();
      const other = { ...ref, id: 'inv-2' };
      runner.watchedElsewhere(other.id);
      runner.completedElsewhere(other.id);
      expect(runner.completedHere(completionEvent(other, 'Completed'))).toBeNull();
    });
  });
});
