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
 * Cancellation flags a pool shares with one worker: one 32-bit cell per run the worker may hold at
 * once, 0 until that run is cancelled. A connector spinning in a loop keeps the worker's event loop
 * busy, so no message could reach it; the interrupt handler reads the run's cell instead. One shared
 * memory per worker, made when it starts: a run only takes a free cell.
 */
export class CancelCells {
  readonly flags: Int32Array;
  private readonly free: number[];

  constructor(count: number) {
    this.flags = new Int32Array(new SharedArrayBuffer(count * Int32Array.BYTES_PER_ELEMENT));
    this.free = Array.from({ length: count }, (_, i) => count - 1 - i);
  }

  /** A cleared cell for a run starting on the worker; null when every cell is taken. */
  take(): number | null {
    const cell = this.free.pop();
    if (cell === undefined) return null;
    Atomics.store(this.flags, cell, 0);
    return cell;
  }

  /** Sets a run's cell: its interrupt handler sees it at once. */
  raise(cell: number): void {
    Atomics.store(this.flags, cell, 1);
  }

  /** Gives back the cell of a run that ended. */
  release(cell: number): void {
    this.free.push(cell);
  }
}

/** The worker thread's side of a cancellation: the run's cell, and the message that wakes a run waiting on host work. */
export class SharedCancellation implements RunCancellation {
  private readonly listeners = new Set<() => void>();

  constructor(
    private readonly flags: Int32Array,
    private readonly cell: number,
  ) {}

  get requested(): boolean {
    return Atomics.load(this.flags, this.cell) === 1;
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
