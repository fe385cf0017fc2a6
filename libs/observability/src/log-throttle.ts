/**
 * Lets through the first line of a kind per window and counts the rest, so a flood of refused calls
 * (a client retrying a bad token in a loop) writes one line per window and kind, not one per call.
 * Kinds are bounded by the caller (a reason, a quota); past `maxKinds` at once, new kinds are counted
 * under their window's first line like the rest.
 */
export class LogThrottle {
  private readonly windows = new Map<string, { until: number; suppressed: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKinds = 256,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /**
   * Whether to write this line; when it is the first of a new window, how many lines of its kind the
   * previous window held back (to be written with it).
   */
  admit(kind: string): { write: boolean; suppressed: number } {
    const now = this.now();
    const current = this.windows.get(kind);
    if (current && now < current.until) {
      current.suppressed++;
      return { write: false, suppressed: 0 };
    }
    if (!current && this.windows.size >= this.maxKinds) this.forgetExpired(now);
    if (!current && this.windows.size >= this.maxKinds) return { write: false, suppressed: 0 };
    this.windows.set(kind, { until: now + this.windowMs, suppressed: 0 });
    return { write: true, suppressed: current?.suppressed ?? 0 };
  }

  private forgetExpired(now: number): void {
    for (const [kind, window] of this.windows) if (window.until <= now) this.windows.delete(kind);
  }
}
