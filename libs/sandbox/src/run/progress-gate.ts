import type { Progress } from '@gi/domain';

/**
 * The progress updates of one run, coalesced: at most one per interval leaves the run, the latest
 * wins, and the last one is always delivered (after the interval, or when the run ends). A connector
 * calling Context.SetProgress in a tight loop thus costs the host (the main thread, the store) no
 * more than one update per interval.
 */
/** An update, or how to make it: read only if it is the one that leaves (a loop's updates mostly never do). */
export type ProgressOffer = Progress | (() => Progress);

export class ProgressGate {
  private sentAt = -Infinity;
  private waiting: ProgressOffer | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deliver: (progress: Progress) => void,
    private readonly intervalMs: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  /** Whether an update offered now leaves at once. */
  isDue(): boolean {
    return this.sentAt + this.intervalMs - this.now() <= 0;
  }

  offer(progress: ProgressOffer): void {
    const due = this.sentAt + this.intervalMs - this.now();
    if (due <= 0) return this.send(progress);
    this.waiting = progress;
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), due);
      this.timer.unref();
    }
  }

  /** Delivers the update still waiting, if any: when the run ends, so its last update is never lost. */
  flush(): void {
    const waiting = this.waiting;
    if (waiting) this.send(waiting);
    else this.stopTimer();
  }

  private send(offer: ProgressOffer): void {
    this.stopTimer();
    this.waiting = null;
    this.sentAt = this.now();
    try {
      this.deliver(typeof offer === 'function' ? offer() : offer);
    } catch {
      // A failing progress listener is the host's problem, never the connector's.
    }
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
