import type { LogLine } from '@gi/domain';
import { formatBytes } from './sandbox-options';

/** The log lines of one run, capped in bytes so a chatty connector cannot fill the store. */
export class LogBuffer {
  private readonly lines: LogLine[] = [];
  private bytes = 0;
  private truncated = false;

  constructor(
    private readonly maxBytes: number,
    private readonly now: () => number = Date.now,
  ) {}

  add(level: LogLine['level'], message: string): void {
    if (this.truncated) return;
    const size = Buffer.byteLength(message);
    if (this.bytes + size <= this.maxBytes) {
      this.bytes += size;
      this.lines.push({ at: this.now(), level, message });
      return;
    }
    const room = this.maxBytes - this.bytes;
    if (room > 0) this.lines.push({ at: this.now(), level, message: cutToBytes(message, room) });
    this.bytes = this.maxBytes;
    this.truncated = true;
    this.lines.push({ at: this.now(), level: 'error', message: `Log truncated: the connector logged more than ${formatBytes(this.maxBytes)}.` });
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
