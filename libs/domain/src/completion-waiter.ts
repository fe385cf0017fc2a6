export interface WaitOptions {
  /** This process just created the invocation and runs it: its completion will most likely be seen here. */
  runsHere?: boolean;
}

export type WaitWatcher = (invocationId: string, options: WaitOptions) => void;

/**
 * Lets callers wait for an invocation's completion event (the bus's `completed` message): sync replies
 * and long polls are woken by the event, never by re-reading the store in a loop. Register before
 * publishing to avoid missing it.
 */
export class CompletionWaiter<Event extends { invocationId: string } = { invocationId: string }> {
  private readonly waiting = new Map<string, Set<(event: Event | null) => void>>();
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

  /** Feed every completion event here. */
  notify(event: Event): void {
    const listeners = this.waiting.get(event.invocationId);
    if (!listeners) return;
    this.waiting.delete(event.invocationId);
    for (const listener of listeners) listener(event);
  }

  /**
   * Starts waiting for `invocationId`; `promise` resolves with the event, or null after `timeoutMs`
   * or on `cancel()`.
   */
  wait(invocationId: string, timeoutMs: number, options: WaitOptions = {}): { promise: Promise<Event | null>; cancel: () => void } {
    let settle!: (event: Event | null) => void;
    const promise = new Promise<Event | null>((resolve) => (settle = resolve));
    const listeners = this.waiting.get(invocationId) ?? new Set();
    this.waiting.set(invocationId, listeners);
    const done = (event: Event | null) => {
      clearTimeout(timer);
      listeners.delete(done);
      if (listeners.size === 0 && this.waiting.get(invocationId) === listeners) this.waiting.delete(invocationId);
      settle(event);
    };
    listeners.add(done);
    const timer = setTimeout(() => done(null), Math.max(0, timeoutMs));
    this.watch?.(invocationId, options);
    return { promise, cancel: () => done(null) };
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
