/**
 * How a run learns that it must stop (its invocation was cancelled). The engine's interrupt handler
 * reads `requested` between operations, so a connector spinning in a loop stops at once; `onRequest`
 * wakes a run that waits on host work (an HTTP call).
 */
export interface RunCancellation {
  readonly requested: boolean;
  /** Calls `listener` once cancellation is requested; returns a function that removes it. */
  onRequest(listener: () => void): () => void;
}

/** A cancellation driven by an AbortSignal of the same thread. */
export function cancellationOf(signal: AbortSignal): RunCancellation {
  return {
    get requested() {
      return signal.aborted;
    },
    onRequest(listener) {
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}

/**
 * The worker thread's side of a cancellation. A connector spinning in a loop keeps the worker's event
 * loop busy, so no message could reach it: the pool sets a flag in memory shared with the worker, which
 * the interrupt handler reads; the message that follows wakes a run waiting on host work.
 */
export class SharedCancellation implements RunCancellation {
  private readonly listeners = new Set<() => void>();

  constructor(private readonly flag: Int32Array) {}

  /** A flag the pool can share with a worker: one 32-bit cell, 0 until cancelled. */
  static newFlag(): Int32Array {
    return new Int32Array(new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT));
  }

  /** The pool's side: set the flag (seen by the interrupt handler at once). */
  static raise(flag: Int32Array): void {
    Atomics.store(flag, 0, 1);
  }

  get requested(): boolean {
    return Atomics.load(this.flag, 0) === 1;
  }

  onRequest(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called when the pool's cancel message arrives. */
  notify(): void {
    for (const listener of [...this.listeners]) listener();
    this.listeners.clear();
  }
}
