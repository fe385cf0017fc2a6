import { EventEmitter } from 'node:events';
import { completionEvent } from '@gi/contracts';
import { LocalJobBus } from '@gi/bus-local';
import { CompletionWaiter } from '@gi/domain';
import { relayCompletionNotices, relayCompletions } from './completion-relay';
import type { CompletionNotice, RelayChannel } from './completion-relay';

/** A cluster worker's IPC channel: what it sent, and a way to deliver what the primary sends. */
function fakeChannel() {
  const emitter = new EventEmitter();
  const sent: CompletionNotice[] = [];
  const channel: RelayChannel = {
    send: (message, callback) => {
      sent.push(message);
      callback(null);
    },
    on: (event, listener) => emitter.on(event, listener),
    off: (event, listener) => emitter.off(event, listener),
  };
  return { channel, sent, deliver: (message: unknown) => emitter.emit('message', message) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('relayCompletions', () => {
  it('sends the completions of one turn to the primary in one message', async () => {
    const bus = new LocalJobBus();
    const { channel, sent } = fakeChannel();
    await relayCompletions(bus, new CompletionWaiter(), channel);
    await bus.publishCompletion(completionEvent({ botId: 'acme', id: 'a' }, 'Completed'));
    await bus.publishCompletion(completionEvent({ botId: 'acme', id: 'b' }, 'Failed'));
    await turn();
    await turn();
    expect(sent).toHaveLength(1);
    expect(sent[0].events.map((e) => e.invocationId)).toEqual(['a', 'b']);
  });

  it('wakes a waiter of this process with a completion another process relayed', async () => {
    const waiter = new CompletionWaiter();
    const { channel, deliver } = fakeChannel();
    await relayCompletions(new LocalJobBus(), waiter, channel);
    const wait = waiter.wait('x', 10_000);
    deliver({ kind: 'gi:completed', events: [completionEvent({ botId: 'acme', id: 'x' }, 'Completed')] });
    await expect(wait.promise).resolves.toMatchObject({ invocationId: 'x' });
    deliver({ kind: 'something else' });
    expect(waiter.size).toBe(0);
  });

  it('stops relaying once stopped', async () => {
    const bus = new LocalJobBus();
    const waiter = new CompletionWaiter();
    const { channel, sent, deliver } = fakeChannel();
    const stop = await relayCompletions(bus, waiter, channel);
    await stop();
    await bus.publishCompletion(completionEvent({ botId: 'acme', id: 'a' }, 'Completed'));
    await turn();
    expect(sent).toEqual([]);
    const wait = waiter.wait('y', 50);
    deliver({ kind: 'gi:completed', events: [completionEvent({ botId: 'acme', id: 'y' }, 'Completed')] });
    await expect(wait.promise).resolves.toBeNull();
  });
});

describe('relayCompletionNotices', () => {
  it('hands a notice to every other live process, never back to its sender', () => {
    const received: number[] = [];
    const worker = (id: number, connected = true) => ({ id, isConnected: () => connected, send: () => received.push(id) });
    const notice: CompletionNotice = { kind: 'gi:completed', events: [] };
    relayCompletionNotices(1, notice, [worker(1), worker(2), worker(3, false), worker(4)]);
    expect(received).toEqual([2, 4]);
  });
});
