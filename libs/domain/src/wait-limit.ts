import { GiError } from './errors';
import { KeyCounts } from './key-counts';

const tooManyWaits = (limit: number) =>
  new GiError(
    'rate_limited',
    'Too many requests',
    `This bot already has ${limit} call${limit === 1 ? '' : 's'} waiting here for a result (sync calls and long polls), its limit; try again shortly, or poll without waitSeconds.`,
    { headers: { 'Retry-After': '1' }, extensions: { scope: 'bot', quota: 'maxWaits', limit } },
  );

/**
 * The calls each bot holds waiting for a result in this process at once (sync calls, their repeats with
 * an Idempotency-Key, long polls), within `perBot`: each one holds a connection, so one bot's waits can
 * never take the connections the other bots need.
 */
export class WaitLimit {
  private readonly waiting = new KeyCounts();

  constructor(
    readonly perBot: number,
    /** Told of each wait refused (a metric). */
    private readonly onRefused?: () => void,
  ) {}

  /** Takes a place for one wait of `botId`; the function returned gives it back (once). Throws 429 with Retry-After at the limit. */
  take(botId: string): () => void {
    if (this.waiting.of(botId) >= this.perBot) {
      this.onRefused?.();
      throw tooManyWaits(this.perBot);
    }
    this.waiting.add(botId);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.waiting.remove(botId);
    };
  }

  /** Waits of `botId` held now. */
  of(botId: string): number {
    return this.waiting.of(botId);
  }
}
