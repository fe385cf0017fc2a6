/**
 * The journal writes of one run, in order: at most `maxInFlight` under way at once (a connector that
 * starts thousands of steps together does not send the store thousands of writes together), the rest
 * waiting their turn, with at most `maxWaitingBytes` of results among them.
 */
export class JournalWrites {
  private inFlight = 0;
  private waitingBytes = 0;
  private readonly waiting: Array<{ bytes: number; start: () => void }> = [];

  constructor(
    private readonly maxInFlight: number,
    private readonly maxWaitingBytes: number,
  ) {}

  /** Writes under way or waiting. */
  get pending(): number {
    return this.inFlight + this.waiting.length;
  }

  /**
   * `write()` now, or once its turn comes; settled with what it settles with, counted down before it
   * is. Null when the results waiting would pass `maxWaitingBytes`: nothing is written.
   */
  add<T>(bytes: number, write: () => Promise<T>): Promise<T> | null {
    const now = this.inFlight < this.maxInFlight;
    if (!now && this.waitingBytes + bytes > this.maxWaitingBytes) return null;
    return new Promise<T>((resolve, reject) => {
      const start = () => {
        this.inFlight++;
        const settle = () => {
          this.inFlight--;
          const next = this.waiting.shift();
          if (next) {
            this.waitingBytes -= next.bytes;
            next.start();
          }
        };
        let written: Promise<T>;
        try {
          written = write();
        } catch (error) {
          written = Promise.reject(error);
        }
        written.then(
          (value) => (settle(), resolve(value)),
          (error: unknown) => (settle(), reject(error)),
        );
      };
      if (now) return start();
      this.waitingBytes += bytes;
      this.waiting.push({ bytes, start });
    });
  }
}
