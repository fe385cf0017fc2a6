import type { RunCancellation } from '@gi/domain';

export type { RunCancellation };

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
