import type { LogBatch, LogLine } from '@gi/domain';

/** At most one write of a running invocation's lines per this interval. */
export const LIVE_LOG_WRITE_MS = 1000;

export interface LiveLogWriterOptions {
  /** The attempt whose lines these are. */
  attempt: number;
  /** Stores a batch; false when the attempt's lease is no longer held. */
  append: (batch: LogBatch) => Promise<boolean>;
  /** Told of a write that failed (it is tried again). */
  onError: (error: unknown) => void;
  intervalMs?: number;
  now?: () => number;
}

/**
 * Writes the lines a running attempt logged to the store as they come, coalesced: at most one write an
 * interval and never two at once, each taking every line that waits. A write that fails is tried
 * again with the same batch (stored once, however often it is sent); once the store says the lease is
 * gone, nothing more is written. `close` waits for the write under way and gives back the lines still
 * unwritten, which the outcome records after those written.
 */
export class LiveLogWriter {
  private waiting: LogLine[] = [];
  /** A batch whose write failed: written again, as it was, before any other. */
  private failed: LogBatch | null = null;
  private nextSeq = 0;
  private writing: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private lastWriteAt = -Infinity;
  private closed = false;
  private leaseLost = false;
  private readonly intervalMs: number;
  private readonly now: () => number;

  constructor(private readonly options: LiveLogWriterOptions) {
    this.intervalMs = options.intervalMs ?? LIVE_LOG_WRITE_MS;
    this.now = options.now ?? (() => performance.now());
  }

  offer(lines: LogLine[]): void {
    if (this.closed || this.leaseLost) return;
    for (const line of lines) this.waiting.push(line);
    this.schedule();
  }

  /** Stops writing; once the write under way is done, the lines not written. */
  async close(): Promise<LogLine[]> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.writing;
    // A batch that failed may have been stored after all: sent again, it is stored once, never twice.
    if (this.failed && !this.leaseLost) await this.write(this.failed);
    const unwritten = [...(this.failed?.lines ?? []), ...this.waiting];
    this.failed = null;
    this.waiting = [];
    return unwritten;
  }

  /**
   * Stops writing, then writes what is left with `lines` after it as one last batch: for a run that
   * suspends, whose lines must be stored before it gives up its lease. False when they could not all be
   * (the lease gone, or the write failed).
   */
  async flush(lines: LogLine[]): Promise<boolean> {
    const rest = [...(await this.close()), ...lines];
    if (rest.length === 0 || this.leaseLost) return !this.leaseLost;
    await this.write({ attempt: this.options.attempt, seq: this.nextSeq++, lines: rest });
    return this.failed === null && !this.leaseLost;
  }

  private schedule(): void {
    if (this.writing || this.timer || this.closed || this.leaseLost) return;
    if (this.waiting.length === 0 && !this.failed) return;
    const wait = this.lastWriteAt + this.intervalMs - this.now();
    if (wait <= 0) return void this.writeNext();
    this.timer = setTimeout(() => {
      this.timer = null;
      if (!this.closed) this.writeNext();
    }, wait);
    this.timer.unref();
  }

  private writeNext(): void {
    const batch = this.failed ?? { attempt: this.options.attempt, seq: this.nextSeq++, lines: this.waiting.splice(0) };
    this.writing = this.write(batch).finally(() => {
      this.writing = null;
      this.schedule();
    });
  }

  private async write(batch: LogBatch): Promise<void> {
    this.failed = null;
    this.lastWriteAt = this.now();
    try {
      if (!(await this.options.append(batch))) this.leaseLost = true;
    } catch (error) {
      this.failed = batch;
      this.options.onError(error);
    }
  }
}
