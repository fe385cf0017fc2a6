import type { CompletionEvent, JobBus } from '@gi/contracts';
import type { CompletionWaiter, WaitOptions } from '@gi/domain';
import { RelayLedger, watchDelayOf } from '@gi/use-cases';

/**
 * What a process of an embedded cluster sends to the others through the primary: the invocations it
 * waits for that may finish elsewhere, and completions another process asked for.
 */
export interface RelayNotice {
  kind: 'gi:relay';
  watch: string[];
  completed: CompletionEvent[];
}

/** The IPC channel of a cluster worker (`process`), or a stand-in in tests. */
export interface RelayChannel {
  send(message: RelayNotice, callback: (error: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
  connected?: boolean;
}

export const isRelayNotice = (message: unknown): message is RelayNotice =>
  typeof message === 'object' &&
  message !== null &&
  (message as RelayNotice).kind === 'gi:relay' &&
  Array.isArray((message as RelayNotice).watch) &&
  Array.isArray((message as RelayNotice).completed);

/**
 * A process of an embedded cluster runs the calls it accepts, but a long poll may reach another process
 * than the run (and a job whose process died runs again elsewhere). The relay carries, through the
 * primary, the watches of the waits that may end elsewhere and the completions another process asked
 * for; which ones, and when, is completion routing's (libs/use-cases `RelayLedger`, `watchDelayOf`).
 * Notices of one turn travel in one IPC message.
 */
export class CompletionRelay {
  private readonly ledger: RelayLedger;
  private outbox: RelayNotice = { kind: 'gi:relay', watch: [], completed: [] };
  private flushing = false;
  private readonly receive = (message: unknown) => {
    if (isRelayNotice(message)) this.received(message);
  };

  constructor(
    private readonly waiter: Pick<CompletionWaiter<CompletionEvent>, 'notify' | 'isWaiting'>,
    private readonly channel: RelayChannel,
    now: () => number = Date.now,
  ) {
    this.ledger = new RelayLedger(now);
    channel.on('message', this.receive);
  }

  /** Starts relaying for the waiter and the bus of this process; resolves with the function that stops it. */
  static async start(bus: Pick<JobBus, 'onCompletion'>, waiter: CompletionWaiter<CompletionEvent>, channel: RelayChannel): Promise<() => Promise<void>> {
    const relay = new CompletionRelay(waiter, channel);
    const subscription = await bus.onCompletion((event) => relay.completedHere(event));
    waiter.watchWaits((invocationId, options) => relay.waiting(invocationId, options));
    return async () => {
      channel.off('message', relay.receive);
      await subscription.close();
    };
  }

  /** A wait started in this process: announced as a watch after its delay, if it still waits then. */
  waiting(invocationId: string, options: WaitOptions): void {
    const ask = () => {
      if (!this.waiter.isWaiting(invocationId)) return;
      this.ledger.watching(invocationId);
      this.queue({ watch: invocationId });
    };
    const delayMs = watchDelayOf(options);
    if (delayMs > 0) setTimeout(ask, delayMs).unref();
    else setImmediate(ask);
  }

  /** An invocation this process ran has finished (its outcome is committed). */
  completedHere(announced: CompletionEvent): void {
    const relayed = this.ledger.completedHere(announced);
    if (relayed) this.queue({ completed: relayed });
  }

  private received(notice: RelayNotice): void {
    for (const event of notice.completed) {
      this.ledger.completedElsewhere(event.invocationId);
      this.waiter.notify(event);
    }
    for (const id of notice.watch) {
      const done = this.ledger.watchedElsewhere(id);
      if (done) this.queue({ completed: done });
    }
    this.ledger.forgetOldWatches();
  }

  private queue(item: { watch?: string; completed?: CompletionEvent }): void {
    if (item.watch) this.outbox.watch.push(item.watch);
    if (item.completed) this.outbox.completed.push(item.completed);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      const notice = this.outbox;
      this.outbox = { kind: 'gi:relay', watch: [], completed: [] };
      this.flushing = false;
      // An error means the primary is gone (this process is ending): no one is left to tell.
      if (this.channel.connected !== false) this.channel.send(notice, () => undefined);
    });
  }
}

/** The primary's part: a notice from one process goes to every other live process. */
export function relayNotices(
  from: number,
  message: RelayNotice,
  workers: Iterable<{ id: number; isConnected(): boolean; send(message: RelayNotice, callback: (error: Error | null) => void): unknown }>,
): void {
  // A process that ended meanwhile had nothing left to wake.
  for (const worker of workers) if (worker.id !== from && worker.isConnected()) worker.send(message, () => undefined);
}
