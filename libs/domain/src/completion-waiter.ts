import { SlotMap } from './slot-map';

export interface WaitOptions {
  /** This process just created the invocation and runs it: its completion will most likely be seen here. */
  runsHere?: boolean;
  /** The job asks for a direct reply to this process: its completion event comes that way (see CompletionRoute). */
  directReply?: boolean;
  /** Called once a `directReply` wait is routed by partition instead, its reply no longer able to come (see CompletionRoute). */
  onPromoted?: () => void;
}

export type WaitWatcher = (invocationId: string, options: WaitOptions) => void;

/**
 * Asks the bus to route one invocation's completion event to this process while it is waited for
 * (JobBus.watchCompletion); resolves once it does. `directReply`: the event comes as a direct reply
 * to this process instead, unless that reply can no longer come: the bus then routes it by partition and
 * calls `onPromoted`.
 */
export type CompletionRoute = (invocationId: string, options: Pick<WaitOptions, 'directReply' | 'onPromoted'>) => Promise<{ release(): void }>;

/**
 * Lets callers wait for an invocation's completion event (the bus's `completed` message): sync replies
 * and long polls are woken by the event, never by re-reading the store in a loop. Register before
 * publishing, and wait for `routed` before reading the store, to avoid missing it.
 */
export class CompletionWaiter<Event extends { invocationId: string } = { invocationId: string }> {
  private readonly waiting = new SlotMap<string, Set<(event: Event | null) => void>>();
  private watch: WaitWatcher | null = null;

  /**
   * Told of every wait as it starts: where the completion may come from another process (several
   * embedded processes), the relay asks for it then. One watcher; a new one replaces it.
   */
  watchWaits(watcher: WaitWatcher): void {
    this.watch = watcher;
  }

  /** Whether some wait for `invocationId` is still open. */
  isWaiting(invocationId: string): boolean {
    return this.waiting.has(invocationId);
  }

  /** Without a route every event is heard anyway (one process, or a bus that broadcasts). */
  constructor(private readonly route?: CompletionRoute) {}

  /** Feed every completion event here. */
  notify(event: Event): void {
    const listeners = this.waiting.get(event.invocationId);
    if (!listeners) return;
    this.waiting.delete(event.invocationId);
    for (const listener of listeners) listener(event);
  }

  /**
   * Starts waiting for `invocationId`; `promise` resolves with the event, or null after `timeoutMs`
   * or on `cancel()`; `routed` resolves once the bus routes the event here.
   */
  wait(invocationId: string, timeoutMs: number, options: WaitOptions = {}): { promise: Promise<Event | null>; routed: Promise<void>; cancel: () => void } {
    let settle!: (event: Event | null) => void;
    const promise = new Promise<Event | null>((resolve) => (settle = resolve));
    const listeners = this.waiting.get(invocationId) ?? new Set();
    this.waiting.set(invocationId, listeners);
    let ended = false;
    let release: () => void = () => undefined;
    const done = (event: Event | null) => {
      if (ended) return;
      ended = true;
      release();
      clearTimeout(timer);
      listeners.delete(done);
      if (listeners.size === 0 && this.waiting.get(invocationId) === listeners) this.waiting.delete(invocationId);
      settle(event);
    };
    listeners.add(done);
    const timer = setTimeout(() => done(null), Math.max(0, timeoutMs));
    this.watch?.(invocationId, options);
    const routed = this.route
      ? this.route(invocationId, options).then(
          (watch) => {
            if (ended) watch.release();
            else release = () => watch.release();
          },
          // Not routed: the wait still ends at its deadline, with a read of the store.
          () => undefined,
        )
      : Promise.resolve();
    return { promise, routed, cancel: () => done(null) };
  }

  /** Ends every wait now (shutdown): each waiter reads the store and answers with what is there. */
  releaseAll(): void {
    for (const listeners of [...this.waiting.values()]) for (const listener of [...listeners]) listener(null);
    this.waiting.clear();
  }

  get size(): number {
    return this.waiting.size;
  }
}
