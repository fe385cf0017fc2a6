import type { LogLine, SecretFilter } from '@gi/domain';

/** What became of a line of the connector's: kept, or refused for passing the bytes or the lines the run may log. */
export type LogAdded = 'kept' | 'bytes' | 'lines';

/** Where the lines of a run that streams its log go while it runs, and how they are batched. */
export interface LogStreaming {
  deliver: (lines: LogLine[]) => void;
  /** A batch leaves once its first line is this old (ms)... */
  intervalMs: number;
  /** ...or once it holds this many lines. */
  maxLines: number;
}

/**
 * The log lines of one run, capped in bytes and in lines so a chatty connector cannot fill the host's
 * memory or the store. With streaming, the lines leave in batches while the run goes on: a batch is
 * sent as a line is added once it is due, and by the run itself when it wakes from a wait (see
 * `dueAt`), so no timer is ever set; what has not left when the run ends comes with its result.
 */
export class LogBuffer {
  private lines: LogLine[] = [];
  private bytes = 0;
  private count = 0;
  private full: LogAdded = 'kept';

  constructor(
    private readonly maxBytes: number,
    private readonly maxLines: number,
    /** The run's secrets: redacted from every line before it is cut (SecretFilter). */
    private readonly secrets: SecretFilter,
    private readonly now: () => number = Date.now,
    private readonly streaming?: LogStreaming,
  ) {}

  /**
   * Adds a line of the connector's: the whole text, or its first `secrets.window(maxBytes)` characters
   * (it is then over the limit). Past a limit it is refused, except the part of it that fits in bytes.
   */
  add(level: LogLine['level'], text: string): LogAdded {
    if (this.full !== 'kept') return this.full;
    if (this.count === this.maxLines) return (this.full = 'lines');
    this.count++;
    const message = this.secrets.redact(text);
    const size = Buffer.byteLength(message);
    if (text.length < this.secrets.window(this.maxBytes) && this.bytes + size <= this.maxBytes) {
      this.bytes += size;
      this.push({ at: this.now(), level, message });
      return 'kept';
    }
    const room = this.maxBytes - this.bytes;
    if (room > 0) this.push({ at: this.now(), level, message: this.secrets.dropSecretStart(cutToBytes(message, room)) });
    this.bytes = this.maxBytes;
    return (this.full = 'bytes');
  }

  /** Lines the host itself adds (errors, limits); not counted against the connector's budget. */
  addSystem(level: LogLine['level'], message: string): void {
    this.lines.push({ at: this.now(), level, message: this.secrets.redact(message) });
  }

  /** When the lines waiting are due to leave (the `now` clock's ms); null when none wait or the run does not stream. */
  dueAt(): number | null {
    return this.streaming && this.lines.length > 0 ? this.lines[0].at + this.streaming.intervalMs : null;
  }

  /** Sends the lines waiting if they are due. */
  sendDue(): void {
    const due = this.dueAt();
    if (due !== null && this.now() >= due) this.send();
  }

  /** The lines that have not left yet: all of them, unless the run streams. */
  rest(): LogLine[] {
    return this.lines.slice();
  }

  private push(line: LogLine): void {
    this.lines.push(line);
    if (this.streaming && (this.lines.length >= this.streaming.maxLines || line.at >= this.lines[0].at + this.streaming.intervalMs)) this.send();
  }

  private send(): void {
    const batch = this.lines;
    this.lines = [];
    try {
      this.streaming?.deliver(batch);
    } catch {
      // A failing listener is the host's problem, never the connector's.
    }
  }
}

/** The longest prefix of `text` that fits in `maxBytes` of UTF-8. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let cut = Buffer.from(text).subarray(0, maxBytes).toString();
  // A multi-byte character cut in half decodes as U+FFFD; drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return cut;
}
