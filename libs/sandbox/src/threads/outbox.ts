import { AsyncResource } from 'node:async_hooks';

/**
 * Messages to another thread, posted together once per turn of the event loop: one structured clone
 * and one wake-up of the receiving thread for all the runs started (or finished) in that turn, rather
 * than one each. A lone message still leaves in the same turn.
 *
 * Nothing thrown while posting escapes: a batch that cannot be posted is posted again one message at
 * a time, and each message that still cannot be is handed to `undeliverable`, which fails its run.
 */
export class Outbox<T> {
  private messages: T[] = [];
  /** Runs in the context the outbox was made in, not in that of whichever sender scheduled it. */
  private readonly flush = AsyncResource.bind(() => this.flushNow());

  constructor(
    private readonly post: (messages: T[]) => void,
    private readonly undeliverable: (message: T, error: unknown) => void,
  ) {}

  /** Messages waiting to leave in this turn. */
  get pending(): number {
    return this.messages.length;
  }

  send(message: T): void {
    if (this.messages.push(message) === 1) setImmediate(this.flush);
  }

  private flushNow(): void {
    const messages = this.messages;
    this.messages = [];
    if (messages.length === 0) return;
    try {
      this.post(messages);
    } catch {
      for (const message of messages) {
        try {
          this.post([message]);
        } catch (error) {
          this.undeliverable(message, error);
        }
      }
    }
  }
}
