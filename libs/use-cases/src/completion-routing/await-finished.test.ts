import { completionEvent } from '@gi/contracts';
import type { CompletionEvent } from '@gi/contracts';
import { CompletionWaiter } from '@gi/domain';
import type { StoredInvocationState } from '@gi/domain';
import { awaitFinished } from './await-finished';

const ref = { id: 'inv-1', botId: 'bot-a' };
const stored: StoredInvocationState = {
  ...ref,
  integrationId: 'ack',
  mode: 'sync',
  status: 'Completed',
  attempt: 1,
  startedAt: 1_000,
  finishedAt: 1_010,
  progress: null,
  outcome: { status: 'Completed', responseBody: { from: 'store' } },
  responseContentType: 'application/json',
  waiting: null,
  steps: 0,
};

/** The store's reads (and `watch` marks, as `watch <id>`), counted; `afterWatch` is the state a mark finds. */
function countingStore(state: StoredInvocationState | null, afterWatch = state) {
  const reads: string[] = [];
  return {
    reads,
    invocations: {
      getState: async (asked: { id: string }) => (reads.push(asked.id), state),
      watch: async (asked: { id: string }) => (reads.push(`watch ${asked.id}`), afterWatch),
    },
  };
}

const running: StoredInvocationState = { ...stored, status: 'Running', finishedAt: null, outcome: null };

describe('awaitFinished', () => {
  it('answers from the facts the completion event carries, without reading the store', async () => {
    const waiter = new CompletionWaiter<CompletionEvent>();
    const store = countingStore(stored);
    const facts = { integrationId: 'ack', attempt: 1, startedAt: 1_000, finishedAt: 1_010, responseContentType: 'application/json', outcome: { status: 'Completed' as const, responseBody: { from: 'event' } } };
    const answer = awaitFinished({ waiter, invocations: store.invocations }, ref, {
      waitMs: 5_000,
      fresh: true,
      registered: async () => void setImmediate(() => waiter.notify(completionEvent(ref, 'Completed', facts))),
    });
    expect(await answer).toEqual({ ...ref, status: 'Completed', progress: null, waiting: null, steps: 0, ...facts });
    expect(store.reads).toEqual([]);
  });

  it('reads the store once when the event carries no facts (a cancellation, a large outcome, a relayed event)', async () => {
    const waiter = new CompletionWaiter<CompletionEvent>();
    const store = countingStore(stored);
    const answer = awaitFinished({ waiter, invocations: store.invocations }, ref, {
      waitMs: 5_000,
      fresh: true,
      registered: async () => void setImmediate(() => waiter.notify(completionEvent(ref, 'Completed'))),
    });
    expect(await answer).toEqual(stored);
    expect(store.reads).toEqual(['inv-1']);
  });

  it('reads the store when the wait runs out', async () => {
    const waiter = new CompletionWaiter<CompletionEvent>();
    const store = countingStore(running);
    expect(await awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 10, fresh: true })).toMatchObject({ status: 'Running' });
    expect(store.reads).toEqual(['inv-1']);
  });

  describe('a waiter other than the sync caller\'s gateway (its executor publishes the event only if told)', () => {
    it('marks a running sync call watched before it waits, and hears the event then', async () => {
      const waiter = new CompletionWaiter<CompletionEvent>();
      const store = countingStore(running);
      const answer = awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 5_000 });
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.reads).toEqual(['inv-1', 'watch inv-1']);
      const facts = { integrationId: 'ack', attempt: 1, startedAt: 1_000, finishedAt: 1_010, responseContentType: 'application/json', outcome: { status: 'Completed' as const, responseBody: 2 } };
      waiter.notify(completionEvent(ref, 'Completed', facts));
      expect(await answer).toMatchObject({ status: 'Completed', outcome: facts.outcome });
    });

    it('answers at once when the call finished between its read and its mark', async () => {
      const waiter = new CompletionWaiter<CompletionEvent>();
      const store = countingStore(running, stored);
      expect(await awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 60_000 })).toEqual(stored);
      expect(store.reads).toEqual(['inv-1', 'watch inv-1']);
      // The wait it registered is gone with the answer, not left to its deadline.
      expect(waiter.isWaiting('inv-1')).toBe(false);
    });

    it('answers null for an invocation that is gone (expired), when its wait ends', async () => {
      const waiter = new CompletionWaiter<CompletionEvent>();
      const store = countingStore(null);
      expect(await awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 10 })).toBeNull();
      expect(store.reads).toEqual(['inv-1', 'inv-1']);
    });

    it('marks neither an async call (its event is always published) nor a finished one', async () => {
      for (const state of [{ ...running, mode: 'async' as const }, stored]) {
        const store = countingStore(state);
        await awaitFinished({ waiter: new CompletionWaiter<CompletionEvent>(), invocations: store.invocations }, ref, { waitMs: 10 });
        expect(store.reads).not.toContain('watch inv-1');
      }
    });
  });

  describe('the sync caller\'s gateway, whose direct reply can no longer come (promoted by the bus)', () => {
    /** A waiter whose route keeps each wait's onPromoted, as the bus would. */
    function promotingWaiter() {
      const promotions: Array<() => void> = [];
      const waiter = new CompletionWaiter<CompletionEvent>(async (_id, options) => {
        if (options.onPromoted) promotions.push(options.onPromoted);
        return { release: () => undefined };
      });
      return { waiter, promote: () => promotions.forEach((promoted) => promoted()), promotions };
    }

    it('answers at once when the call already finished', async () => {
      const { waiter, promote } = promotingWaiter();
      const store = countingStore(stored);
      const answer = awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 60_000, fresh: true, directReply: true });
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.reads).toEqual([]);
      promote();
      expect(await answer).toEqual(stored);
      // Finished already: no mark needed, and the wait ends with a read of the store.
      expect(store.reads).toEqual(['inv-1', 'inv-1']);
    });

    it('marks the call watched and goes on waiting for the event when it is still running', async () => {
      const { waiter, promote } = promotingWaiter();
      const store = countingStore(running);
      const answer = awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 60_000, fresh: true, directReply: true });
      await new Promise((resolve) => setImmediate(resolve));
      promote();
      await new Promise((resolve) => setImmediate(resolve));
      expect(store.reads).toEqual(['inv-1', 'watch inv-1']);
      expect(waiter.isWaiting('inv-1')).toBe(true);
      const facts = { integrationId: 'ack', attempt: 1, startedAt: 1_000, finishedAt: 1_010, responseContentType: 'application/json', outcome: { status: 'Completed' as const, responseBody: 1 } };
      waiter.notify(completionEvent(ref, 'Completed', facts));
      expect(await answer).toMatchObject({ status: 'Completed', outcome: facts.outcome });
    });

    it('asks for no promotion hook when it does not expect a direct reply', async () => {
      const { waiter, promotions } = promotingWaiter();
      await awaitFinished({ waiter, invocations: countingStore(stored).invocations }, ref, { waitMs: 10 });
      expect(promotions).toEqual([]);
    });
  });
});
