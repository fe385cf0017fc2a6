import { completionEvent } from '@gi/contracts';
import type { CompletionEvent } from '@gi/contracts';
import { CompletionWaiter } from '@gi/domain';
import type { InvocationState } from '@gi/domain';
import { awaitFinished } from './await-finished';

const ref = { id: 'inv-1', botId: 'bot-a' };
const stored: InvocationState = {
  ...ref,
  integrationId: 'ack',
  status: 'Completed',
  attempt: 1,
  startedAt: 1_000,
  finishedAt: 1_010,
  progress: null,
  outcome: { status: 'Completed', responseBody: { from: 'store' } },
  responseContentType: 'application/json',
};

/** The store's reads, counted. */
function countingStore(state: InvocationState | null) {
  const reads: string[] = [];
  return { reads, invocations: { getState: async (asked: { id: string }) => (reads.push(asked.id), state) } };
}

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
    expect(await answer).toEqual({ ...ref, status: 'Completed', progress: null, ...facts });
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
    const store = countingStore({ ...stored, status: 'Running', finishedAt: null, outcome: null });
    expect(await awaitFinished({ waiter, invocations: store.invocations }, ref, { waitMs: 10, fresh: true })).toMatchObject({ status: 'Running' });
    expect(store.reads).toEqual(['inv-1']);
  });
});
