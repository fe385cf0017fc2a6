/**
 * How a connector run learns that it must stop (its invocation was cancelled, or its lease lost).
 * `requested` can be read at any time (the engine's interrupt handler reads it between operations);
 * `onRequest` wakes a run that waits (queued, or on host work such as an HTTP call).
 */
export interface RunCancellation {
  readonly requested: boolean;
  /** Calls `listener` once cancellation is requested; returns a function that removes it. */
  onRequest(listener: () => void): () => void;
}

/**
 * A run's cancellation on the thread that requests it: a flag and the listeners to call once. Plain
 * fields rather than an AbortController, whose event machinery costs more per run than the rest of
 * its bookkeeping; nearly every run ends without ever being cancelled.
 */
export class Cancellation implements RunCancellation {
  private isRequested = false;
  private listeners: (() => void)[] | null = null;

  get requested(): boolean {
    return this.isRequested;
  }

  /** Requests it: each listener is called once, in the order added. Later requests do nothing. */
  request(): void {
    if (this.isRequested) return;
    this.isRequested = true;
    const listeners = this.listeners;
    this.listeners = null;
    if (listeners) for (const listener of listeners) listener();
  }

  onRequest(listener: () => void): () => void {
    if (this.isRequested) return () => undefined;
    (this.listeners ??= []).push(listener);
    return () => {
      const index = this.listeners?.indexOf(listener) ?? -1;
      if (index !== -1) this.listeners?.splice(index, 1);
    };
  }
}
