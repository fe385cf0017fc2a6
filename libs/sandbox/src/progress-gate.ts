import type { Progress } from '@gi/domain';

/**
 * The progress updates of one run, coalesced: at most one per interval leaves the run, the latest
 * wins, and the last one is always delivered (after the interval, or when the run ends). A connector
 * calling Context.SetProgress in a tight loop thus costs the host (the main thread, the store) no
 * more than one update per interval.
 */
export class ProgressGate {
  private sentAt = -Infinity;
  private waiting: Progress | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly deliver: (progress: Progress) => void,
    private readonly intervalMs: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {}

  offer(progress: Progress): void {
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

  private send(progress: Progress): void {
    this.stopTimer();
    this.waiting = null;
    this.sentAt = this.now();
    try {
      this.deliver(progress);
    } catch {
      // A failing progress listener is the host's problem, never the connector's.
    }
  }

  private stopTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
