import type { CompletionEvent } from '@gi/contracts';
import { EventEmitter } from 'node:events';
import { completionEvent } from '@gi/contracts';
import { LocalJobBus } from '@gi/bus-local';
import { CompletionWaiter } from '@gi/domain';
import { LATE_WATCH_MS, RECENT_MS } from '@gi/use-cases';
import { CompletionRelay, relayNotices } from './completion-relay';
import type { RelayChannel, RelayNotice } from './completion-relay';

/**
 * The processes of a cluster, each with its bus, waiter and relay, linked by a primary that hands each
 * notice to the others (as embedded-primary.ts does over IPC). `sent` counts the notices.
 */
function cluster(size: number) {
  let sent = 0;
  const emitters = Array.from({ length: size }, () => new EventEmitter());
  const workers = emitters.map((emitter, id) => ({ id, isConnected: () => true, send: (message: RelayNotice) => emitter.emit('message', message) }));
  const processes = emitters.map((emitter, id) => {
    const channel: RelayChannel = {
      send: (message, callback) => {
        sent++;
        relayNotices(id, message, workers);
        callback(null);
      },
      on: (event, listener) => emitter.on(event, listener),
      off: (event, listener) => emitter.off(event, listener),
    };
    return { bus: new LocalJobBus(), waiter: new CompletionWaiter<CompletionEvent>(), channel };
  });
  return {
    processes,
    sent: () => sent,
    // Each waiter hears its own bus (build-deps.ts completionWaiter), and the others through the relay.
    start: () =>
      Promise.all(
        processes.map(async (p) => {
          await p.bus.onCompletion((event) => p.waiter.notify(event));
          return CompletionRelay.start(p.bus, p.waiter, p.channel);
        }),
      ),
  };
}

const done = (id: string) => completionEvent({ botId: 'acme', id }, 'Completed');
const turns = async (n = 3) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('CompletionRelay', () => {
  afterEach(() => jest.useRealTimers());

  it('wakes a poll in one process with the completion of a run in another', async () => {
    const { processes, start } = cluster(3);
    await start();
    const [runner, poller] = processes;
    const wait = poller.waiter.wait('x', 10_000);
    await turns();
    await runner.bus.publishCompletion(done('x'));
    await expect(wait.promise).resolves.toMatchObject({ invocationId: 'x' });
  });

  it('wakes a poll whose watch arrives just after the run finished', async () => {
    const { processes, start } = cluster(2);
    await start();
    const [runner, poller] = processes;
    await runner.bus.publishCompletion(done('x'));
    await turns();
    const wait = poller.waiter.wait('x', 10_000);
    await expect(wait.promise).resolves.toMatchObject({ invocationId: 'x' });
  });

  it('sends nothing for calls answered where they ran', async () => {
    const { processes, sent, start } = cluster(2);
    await start();
    const [one] = processes;
    for (const id of ['a', 'b', 'c']) {
      const wait = one.waiter.wait(id, 10_000, { runsHere: true });
      await one.bus.publishCompletion(done(id));
      await wait.promise;
    }
    // A poll of a finished invocation ends before its watch would go out.
    one.waiter.wait('d', 10_000).cancel();
    await turns();
    expect(sent()).toBe(0);
  });

  it('asks the others for a sync call still waiting after LATE_WATCH_MS (its job taken over elsewhere)', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'queueMicrotask', 'nextTick'] });
    const { processes, start } = cluster(2);
    await start();
    const [caller, taker] = processes;
    const wait = caller.waiter.wait('x', 60_000, { runsHere: true });
    await taker.bus.publishCompletion(done('x'));
    await turns();
    jest.advanceTimersByTime(LATE_WATCH_MS);
    await turns();
    await expect(wait.promise).resolves.toMatchObject({ invocationId: 'x' });
  });

  it('forgets its completions after RECENT_MS', async () => {
    let now = 0;
    const sent: RelayNotice[] = [];
    const emitter = new EventEmitter();
    const channel: RelayChannel = { send: (m, cb) => (sent.push(m), cb(null)), on: (e, l) => emitter.on(e, l), off: (e, l) => emitter.off(e, l) };
    const relay = new CompletionRelay(new CompletionWaiter<CompletionEvent>(), channel, () => now);
    relay.completedHere(done('old'));
    now = RECENT_MS + 1;
    relay.completedHere(done('new'));
    emitter.emit('message', { kind: 'gi:relay', watch: ['old', 'new'], completed: [] });
    await turns();
    expect(sent.flatMap((m) => m.completed.map((e) => e.invocationId))).toEqual(['new']);
  });

  it('stops listening once stopped', async () => {
    const { processes, start } = cluster(2);
    const stops = await start();
    await Promise.all(stops.map((stop) => stop()));
    const [runner, poller] = processes;
    // The runner's relay is stopped: its completion reaches only its own waiter.
    const wait = poller.waiter.wait('x', 50);
    await turns();
    await runner.bus.publishCompletion(done('x'));
    await expect(wait.promise).resolves.toBeNull();
  });
});

describe('relayNotices', () => {
  it('hands a notice to every other live process, never back to its sender', () => {
    const received: number[] = [];
    const worker = (id: number, connected = true) => ({ id, isConnected: () => connected, send: () => received.push(id) });
    relayNotices(1, { kind: 'gi:relay', watch: [], completed: [] }, [worker(1), worker(2), worker(3, false), worker(4)]);
    expect(received).toEqual([2, 4]);
  });
});
