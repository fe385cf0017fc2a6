import type { LogLine } from '@gi/domain';

/** The log lines of one run, capped in bytes so a chatty connector cannot fill the store. */
export class LogBuffer {
  private readonly lines: LogLine[] = [];
  private bytes = 0;
  private full = false;

  constructor(
    private readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds a line of the connector's; false when it does not fit, in which case the part that fits is kept. */
  add(level: LogLine['level'], message: string): boolean {
    if (this.full) return false;
    const size = Buffer.byteLength(message);
    if (this.bytes + size <= this.maxBytes) {
      this.bytes += size;
      this.lines.push({ at: this.now(), level, message });
      return true;
    }
    const room = this.maxBytes - this.bytes;
    if (room > 0) this.lines.push({ at: this.now(), level, message: cutToBytes(message, room) });
    this.bytes = this.maxBytes;
    this.full = true;
    return false;
  }

  /** Lines the host itself adds (errors, limits); not counted against the connector's budget. */
  addSystem(level: LogLine['level'], message: string): void {
    this.lines.push({ at: this.now(), level, message });
  }

  toArray(): LogLine[] {
    return this.lines.slice();
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
