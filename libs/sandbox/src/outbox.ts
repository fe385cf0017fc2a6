/**
 * Messages to another thread, posted together once per turn of the event loop: one structured clone
 * and one wake-up of the receiving thread for all the runs started (or finished) in that turn, rather
 * than one each. A lone message still leaves in the same turn.
 */
export class Outbox<T> {
  private messages: T[] = [];

  constructor(private readonly post: (messages: T[]) => void) {}

  /** Messages waiting to leave in this turn. */
  get pending(): number {
    return this.messages.length;
  }

  send(message: T): void {
    if (this.messages.push(message) === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const messages = this.messages;
    this.messages = [];
    if (messages.length > 0) this.post(messages);
  }
}
