import type { TextSink } from './cli-io';
import { writeLine } from './cli-io';
import { terminalText } from './terminal-text';

export interface PollState {
  status: string;
  message?: string;
  percent?: number;
}

/** Shows a waiting invocation on stderr: a live spinner for a person, a line per poll for a log file. */
export interface ProgressIndicator {
  update(state: PollState): void;
  /** A passing remark (a retry, a renewed token). */
  note(text: string): void;
  stop(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
const CLEAR_LINE = '\r\x1b[2K';

export function describeState(state: PollState): string {
  const parts = [state.status];
  if (state.percent !== undefined) parts.push(`${Math.round(state.percent)}%`);
  if (state.message) parts.push(state.message.replace(/\s+/g, ' ').trim());
  return parts.join(' ');
}

const elapsed = (ms: number) => `${Math.floor(ms / 1000)}s`;

export function createProgressIndicator(sink: TextSink, invocationId: string, now: () => number): ProgressIndicator {
  return sink.isTTY ? new SpinnerIndicator(sink, invocationId, now) : new LineIndicator(sink, invocationId, now);
}

/** Non-TTY: one line per poll, so logs show how the run went. */
export class LineIndicator implements ProgressIndicator {
  private readonly startedAt: number;

  constructor(
    private readonly sink: TextSink,
    private readonly invocationId: string,
    private readonly now: () => number,
  ) {
    this.startedAt = now();
  }

  update(state: PollState): void {
    writeLine(this.sink, `[${elapsed(this.now() - this.startedAt)}] ${this.invocationId} ${describeState(state)}`);
  }

  note(text: string): void {
    writeLine(this.sink, `[${elapsed(this.now() - this.startedAt)}] ${text}`);
  }

  stop(): void {}
}

/** TTY: a spinner redrawn in place with the latest status; the line is cleared when done. */
export class SpinnerIndicator implements ProgressIndicator {
  private readonly startedAt: number;
  private frame = 0;
  private text = 'waiting for the result';
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly sink: TextSink,
    private readonly invocationId: string,
    private readonly now: () => number,
    intervalMs = 100,
  ) {
    this.startedAt = now();
    this.timer = setInterval(() => this.render(), intervalMs);
    this.timer.unref();
    this.render();
  }

  update(state: PollState): void {
    this.text = describeState(state);
    this.render();
  }

  note(text: string): void {
    this.text = text;
    this.render();
  }

  render(): void {
    const spinner = FRAMES[this.frame++ % FRAMES.length];
    // One write per frame, to the terminal itself: the line clearing is the CLI's own; the status is inert text.
    const line = terminalText(`${spinner} ${this.invocationId} ${this.text} (${elapsed(this.now() - this.startedAt)})`, { singleLine: true });
    (this.sink.raw ?? this.sink).write(`${CLEAR_LINE}${line}`);
  }

  stop(): void {
    clearInterval(this.timer);
    (this.sink.raw ?? this.sink).write(CLEAR_LINE);
  }
}
