/**
 * What one run may ask of the host beyond its integration's own limits, the same for every
 * integration: every host call a connector makes has a size and a rate budget, so no connector can
 * flood the host (its memory, the main thread, the store) and slow other bots' runs. Documented in
 * the README's limits table and docs/connectors.md.
 */
export const RUN_BUDGET = {
  /** ResponseBody: arrays and objects nested at most this deep (the host serialises it without risk). */
  responseDepth: 1000,
  /** Context.SetProgress: at most one update per interval leaves the run; the latest wins, the last is always delivered. */
  progressIntervalMs: 1000,
  /** Characters kept of a progress message. */
  progressMessageChars: 1000,
  /** Characters kept of a RaiseError title and message. */
  raisedTitleChars: 200,
  raisedMessageChars: 2000,
  /** Characters kept of a thrown error's message and stack. */
  errorMessageChars: 2000,
  errorStackChars: 4000,
  /** Log lines one run may write (Context.Log, console.*), whatever their size. */
  logLines: 10_000,
  /**
   * Lines logged while a run goes on leave it in batches (see ConnectorRunRequest.onLogs): once the
   * first line waiting is this old, or this many lines wait. A run that ends sooner sends its lines
   * with its result alone.
   */
  logBatchMs: 500,
  logBatchLines: 500,
  /** Context.Http.Request: the largest request body (text, or JSON). */
  httpRequestBytes: 10 * 1024 * 1024,
  /** JSON data one argument of a standard global's host function may carry (bytes travel apart, as ArrayBuffers). */
  hostArgumentChars: 16 * 1024 * 1024,
  /** Context.Http.Request and Context.ReadFile calls started per second (and at once); more start later. */
  hostCallsPerSecond: 100,
} as const;

/**
 * Whether JSON text nests arrays and objects more than `max` levels deep; brackets inside strings do
 * not count. Each level takes two characters, so shorter texts are not read at all.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  if (text.length <= 2 * max) return false;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = endOfString(text, i);
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/** The index of the quote that closes the JSON string opened at `start`. */
function endOfString(text: string, start: number): number {
  for (let at = start + 1; ; at++) {
    at = text.indexOf('"', at);
    if (at === -1) return text.length;
    let backslashes = 0;
    while (text.charCodeAt(at - 1 - backslashes) === 0x5c) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/**
 * Host calls started per second, in bursts of as many: a call within the budget starts at once, one
 * over it is told how long to wait for its turn.
 */
export class CallRate {
  private tokens: number;
  private refilled: number;

  constructor(
    private readonly perSecond: number,
    private readonly now: () => number = performance.now.bind(performance),
  ) {
    this.tokens = perSecond;
    this.refilled = now();
  }

  /** Takes a turn: 0 when the call may start now, else the milliseconds until its turn comes. */
  take(): number {
    const now = this.now();
    this.tokens = Math.min(this.perSecond, this.tokens + ((now - this.refilled) * this.perSecond) / 1000);
    this.refilled = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens * 1000) / this.perSecond);
  }
}
