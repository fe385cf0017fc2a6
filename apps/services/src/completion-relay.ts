import { completionEvent } from '@gi/contracts';
import type { CompletionEvent, JobBus } from '@gi/contracts';
import type { CompletionWaiter, WaitOptions } from '@gi/domain';

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

/** Completions kept to answer a watch that arrives just after them (an IPC hop, or a late sync watch). */
export const RECENT_MS = 5_000;
/** A sync call's wait in the process that runs the job asks the others only once it lasted this long. */
export const LATE_WATCH_MS = 1_000;

/**
 * A process of an embedded cluster runs the calls it accepts, but a long poll may reach another process
 * than the run (and a job whose process died runs again elsewhere). Rather than send every completion to
 * every process, a process asks for the ones it waits for:
 *
 * - a wait that may end elsewhere (a poll) is announced as a watch once the store was read; a sync
 *   call's wait in the process that runs its job, only after LATE_WATCH_MS (in case another process
 *   took its job over);
 * - a process sends a completion to the others when one of them watches it, or when it is the answer
 *   to a watch that arrives within RECENT_MS after it (the completion came first), or when this process
 *   announced a watch for it itself (so the others forget that watch).
 *
 * A wait is registered before the store is read, and a completion is announced after it is committed:
 * whichever comes first, the waiting process is told. Notices of one turn travel in one IPC message.
 */
export class CompletionRelay {
  /** Invocations other processes wait for, with when their wait ends. */
  private readonly watched = new Map<string, number>();
  /** This process's completions of the last RECENT_MS, oldest first. */
  private readonly recent = new Map<string, { event: CompletionEvent; at: number }>();
  /** Watches this process announced. */
  private readonly announced = new Set<string>();
  private outbox: RelayNotice = { kind: 'gi:relay', watch: [], completed: [] };
  private flushing = false;
  private readonly receive = (message: unknown) => {
    if (isRelayNotice(message)) this.received(message);
  };

  constructor(
    private readonly waiter: Pick<CompletionWaiter<CompletionEvent>, 'notify' | 'isWaiting'>,
    private readonly channel: RelayChannel,
    private readonly now: () => number = Date.now,
  ) {
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

  /**
   * A wait started in this process. It is announced once the store was read (a poll of a finished
   * invocation ends then and asks no one), or after LATE_WATCH_MS for a sync call whose job runs here.
   */
  waiting(invocationId: string, { runsHere = false }: WaitOptions): void {
    const ask = () => {
      if (this.waiter.isWaiting(invocationId)) this.announce(invocationId);
    };
    if (runsHere) setTimeout(ask, LATE_WATCH_MS).unref();
    else setImmediate(ask);
  }

  /** An invocation this process ran has finished (its outcome is committed). */
  completedHere(announced: CompletionEvent): void {
    // Kept and relayed without what was recorded (a ResponseBody held for seconds, sent between
    // processes): a waiter in another process reads the store, as it would without the relay.
    const event = completionEvent({ id: announced.invocationId, botId: announced.botId }, announced.status);
    const id = event.invocationId;
    const now = this.now();
    this.recent.set(id, { event, at: now });
    for (const [old, { at }] of this.recent) {
      if (now - at <= RECENT_MS) break;
      this.recent.delete(old);
    }
    const watchedElsewhere = this.watched.delete(id);
    const watchedHere = this.announced.delete(id);
    if (watchedElsewhere || watchedHere) this.queue({ completed: event });
  }

  private announce(invocationId: string): void {
    // Bounded: an entry forgotten early only leaves the others a watch that ages out.
    if (this.announced.size >= MAX_ANNOUNCED) this.announced.clear();
    this.announced.add(invocationId);
    this.queue({ watch: invocationId });
  }

  private received(notice: RelayNotice): void {
    for (const event of notice.completed) {
      this.watched.delete(event.invocationId);
      this.announced.delete(event.invocationId);
      this.waiter.notify(event);
    }
    const now = this.now();
    for (const id of notice.watch) {
      const done = this.recent.get(id);
      if (done) this.queue({ completed: done.event });
      else this.watched.set(id, now);
    }
    this.forgetOldWatches(now);
  }

  /** Watches older than the longest wait (a sync call's) are dropped: their invocation finished elsewhere, or expired. */
  private forgetOldWatches(now: number): void {
    for (const [id, since] of this.watched) {
      if (now - since <= MAX_WATCH_MS) break;
      this.watched.delete(id);
    }
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

/** The longest a wait can last: a sync call's (SYNC_TIMEOUT_SECONDS is at most an hour). */
const MAX_WATCH_MS = 3_600_000;
const MAX_ANNOUNCED = 100_000;

/** The primary's part: a notice from one process goes to every other live process. */
export function relayNotices(
  from: number,
  message: RelayNotice,
  workers: Iterable<{ id: number; isConnected(): boolean; send(message: RelayNotice, callback: (error: Error | null) => void): unknown }>,
): void {
  // A process that ended meanwhile had nothing left to wake.
  for (const worker of workers) if (worker.id !== from && worker.isConnected()) worker.send(message, () => undefined);
}
