import { SecretUnreadable, webhookHeaders } from '@gi/auth';
import type { SecretVault } from '@gi/auth';
import { callbackRetryDelayMs, InFlight, isTerminal, KeyCounts } from '@gi/domain';
import type { CallbackSender, Clock, InvocationRef, Store } from '@gi/domain';
import type { Logger, Metrics } from '@gi/observability';
import { callbackPayload } from './callback-payload';

export interface CallbackSettings {
  /** Attempts per callback, the first included, before it is given up. */
  maxAttempts: number;
  /** The wait after the first failed attempt; each further one waits four times longer (at most an hour). */
  retryBaseMs: number;
  /** A taken delivery is left to its sender this long before another sender may take it. */
  leaseMs: number;
}

export interface CallbackDeps {
  store: Store;
  sender: CallbackSender;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  settings: CallbackSettings;
  /** Opens signing secrets stored sealed (SECRETS_KEY); without it only those stored in clear can sign. */
  secrets?: Pick<SecretVault, 'openSigningSecret'>;
  /** The jitter of retry delays (tests fix it). */
  random?: () => number;
}

/** POSTs in flight at once, per process. */
export const CALLBACK_CONCURRENCY = 16;
/**
 * POSTs of one bot in flight at once, per process: a bot whose receiver never answers holds at most
 * these, and the other bots' callbacks go out beside them, in turns.
 */
export const CALLBACK_PER_BOT = 4;
const USER_AGENT = 'generic-integration-callbacks/1';
const TIMER_SLACK_MS = 20;

/**
 * Delivers callbacks of finished invocations, durable across restarts: the store holds each one's
 * state; whenever a POST slot is free the due ones are taken (claimed for a lease, so senders never
 * share one), POSTed signed, and each attempt recorded: delivered on a 2xx, else retried later with
 * back-off and jitter until `maxAttempts`, or given up at once when the egress policy refuses the URL.
 * Bots share the slots: at most CALLBACK_PER_BOT of one bot's POSTs at once, taken in turns between
 * bots (takeDueCallbacks), so one bot's slow or silent receiver cannot hold another bot's callbacks.
 * Taking runs when kicked (an invocation with a callback finished, a cancellation was heard), when a
 * POST ends, when a retry falls due, and on every sweep (what a stopped process left behind).
 */
export class CallbackDispatcher {
  /** POSTs in flight, by bot. */
  private readonly inFlight = new KeyCounts();
  private readonly posts = new InFlight();
  private taking: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;

  constructor(private readonly deps: CallbackDeps) {}

  /** Takes due callbacks soon; a kick while taking makes it take once more after. */
  kick(): void {
    if (this.stopped) return;
    if (this.taking) {
      this.again = true;
      return;
    }
    this.taking = this.takeWhileRoom().finally(() => {
      this.taking = null;
      if (this.again) {
        this.again = false;
        this.kick();
      }
    });
  }

  /** Delivers until nothing is due any more and no POST is in flight. */
  async drain(): Promise<void> {
    this.kick();
    while (this.taking || this.posts.size > 0) {
      await this.taking;
      await this.posts.settled();
    }
  }

  /** Takes no more work and waits for the POSTs under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.taking;
    await this.posts.settled();
  }

  /** Takes due callbacks into the free POST slots, each bot within its share, and starts them. */
  private async takeWhileRoom(): Promise<void> {
    const { store, clock, settings, logger } = this.deps;
    try {
      while (!this.stopped && this.inFlight.total < CALLBACK_CONCURRENCY) {
        const share = { perBot: CALLBACK_PER_BOT, inFlight: new Map(this.inFlight.entries()) };
        const due = await store.invocations.takeDueCallbacks(clock.now(), settings.leaseMs, CALLBACK_CONCURRENCY - this.inFlight.total, share);
        if (due.length === 0) return;
        for (const ref of due) this.start(ref);
      }
    } catch (err) {
      logger.warn({ err }, 'could not take due callbacks; the next kick or sweep retries');
    }
  }

  private start(ref: InvocationRef): void {
    this.inFlight.add(ref.botId);
    const attempt = this.deliver(ref).catch((err) => this.deps.logger.warn({ err, invocationId: ref.id }, 'callback attempt failed to run; retried after its lease'));
    void this.posts.track(attempt).then(() => {
      this.inFlight.remove(ref.botId);
      // A slot is free: what waited for it goes now.
      this.kick();
    });
  }

  private async deliver(ref: InvocationRef): Promise<void> {
    const { store, sender, clock, settings, metrics } = this.deps;
    const invocation = await store.invocations.get(ref);
    if (!invocation?.callback || invocation.callback.state !== 'pending' || !isTerminal(invocation.status)) return;
    const finished = { ...invocation, status: invocation.status };
    const at = clock.now();
    const attempt = invocation.callback.attempts + 1;
    const secrets = await store.catalog.getSigningSecrets(ref.botId, at);
    let error: string | null = null;
    let permanent = false;
    const keys = this.signingKeys(ref.botId, secrets.map((s) => s.secret));
    if (secrets.length === 0) {
      error = 'The bot has no signing secret, so the callback cannot be signed.';
      permanent = true;
    } else if (typeof keys === 'string') {
      // Tried again: the key may be configured by then.
      error = keys;
    } else {
      const body = JSON.stringify(callbackPayload(finished));
      const signing = webhookHeaders(
        keys,
        invocation.id,
        Math.floor(at / 1000),
        body,
      );
      const result = await sender.post(invocation.callback.url, { 'content-type': 'application/json', 'user-agent': USER_AGENT, ...signing }, body);
      if (result.kind !== 'answered') {
        error = result.reason;
        permanent = result.kind === 'refused';
      } else if (result.status < 200 || result.status >= 300) {
        error = `The receiver answered ${result.status}.`;
      }
    }
    const giveUp = error !== null && (permanent || attempt >= settings.maxAttempts);
    const nextAttemptAt = error === null || giveUp ? null : at + callbackRetryDelayMs(attempt, settings.retryBaseMs, this.deps.random);
    await store.invocations.recordCallbackAttempt(ref, { at, error, nextAttemptAt });

    const log = this.deps.logger.child({ invocationId: ref.id, botId: ref.botId, attempt });
    if (error === null) log.info('callback delivered');
    else if (giveUp) log.warn({ reason: error }, 'callback given up');
    else log.info({ reason: error, nextAttemptAt: new Date(nextAttemptAt as number).toISOString() }, 'callback not delivered; retried later');
    metrics.callbackDeliveries.inc({ result: error === null ? 'delivered' : giveUp ? 'given-up' : 'retry' });
    if (nextAttemptAt !== null) this.wakeAt(nextAttemptAt);
  }

  /** Runs a round when the earliest retry this process knows of falls due. */
  private wakeAt(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    // A timer may fire a moment before the wall clock reaches `at`: a little later is never too early.
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      this.kick();
    }, Math.max(0, at - this.deps.clock.now()) + TIMER_SLACK_MS);
    this.timer.unref();
  }

  /** The signing secrets in clear, or why they cannot be read (sealed under a key this process lacks). */
  private signingKeys(botId: string, stored: string[]): string[] | string {
    const vault = this.deps.secrets;
    try {
      return vault ? stored.map((s) => vault.openSigningSecret(botId, s)) : stored;
    } catch (err) {
      if (!(err instanceof SecretUnreadable)) throw err;
      this.deps.logger.error({ err, botId }, 'the bot\'s callback signing secret cannot be decrypted');
      return `The signing secret cannot be decrypted: ${err.message}`;
    }
  }
}
