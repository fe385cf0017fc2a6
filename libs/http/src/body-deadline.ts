import { GiError } from '@gi/domain';

/** How long a client may take to send a request body. */
export interface BodyTimeouts {
  /** The longest pause between two pieces of the body. */
  idleMs: number;
  /** The whole body, from the moment the service starts reading it. */
  totalMs: number;
}

export const requestTimeout = (detail: string) => new GiError('request_timeout', 'Request timeout', detail);

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * The two clocks of a body being read. `touch` on every piece that arrives; `hold` while the service
 * itself stops reading (its disk is slower than the client): a pause of the service's own is not the
 * client's. `onExpire` gets the 408 to answer when the client paused too long or is taking too long in
 * all. `stop` once the body is read, or the call failed otherwise.
 */
export class BodyDeadline {
  private idle: NodeJS.Timeout | null = null;
  private readonly total: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly timeouts: BodyTimeouts,
    private readonly onExpire: (error: GiError) => void,
  ) {
    this.total = setTimeout(() => this.expire(`The request body took longer than ${seconds(timeouts.totalMs)} to arrive; nothing was accepted.`), timeouts.totalMs);
    this.touch();
  }

  touch(): void {
    if (this.stopped) return;
    if (this.idle) this.idle.refresh();
    else this.idle = setTimeout(() => this.expire(`The request body stopped arriving: nothing came for ${seconds(this.timeouts.idleMs)}; nothing was accepted.`), this.timeouts.idleMs);
  }

  hold(): void {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
  }

  stop(): void {
    this.stopped = true;
    this.hold();
    clearTimeout(this.total);
  }

  private expire(detail: string): void {
    this.stop();
    this.onExpire(requestTimeout(detail));
  }
}
