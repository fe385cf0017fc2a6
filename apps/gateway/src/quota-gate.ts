import { botLimits, GiError, QUOTA_CACHE_MS, shareOf, tokenLimits, TokenBuckets, unavailable } from '@gi/domain';
import type { ActiveCount, BotQuotas, CatalogStore, Clock, InvocationStore, QuotaDefaults, RateLimit } from '@gi/domain';

export { QUOTA_CACHE_MS };
/** Counts of invocations in flight are read again (in the background) after this long. */
export const COUNT_CACHE_MS = 1_000;
/** A gateway that used up its share reads the count again before refusing, but not more often than this. */
const COUNT_MIN_AGE_MS = 250;
/** Idle caches and full buckets are dropped this often. */
const PRUNE_EVERY_MS = 60_000;

export type QuotaScope = 'bot' | 'token';
export type QuotaName = 'ratePerSecond' | 'maxInFlight';

export interface QuotaGateDeps {
  catalog: Pick<CatalogStore, 'getQuotas'>;
  invocations: Pick<InvocationStore, 'countActive'>;
  clock: Clock;
  defaults: QuotaDefaults;
  /** How many gateways (this one included) enforce the quotas together; each enforces its share. */
  peers: () => number;
  /** Told of every call turned away, for metrics. */
  onRefused?: (scope: QuotaScope, quota: QuotaName) => void;
}

/**
 * A call let through. Exactly one of the two follows: `stored` once its invocation is in the store,
 * `release` when it ends up storing none (bad input, a store failure, an Idempotency-Key repeat).
 */
export interface Admission {
  stored(): void;
  release(): void;
}

const NOTHING_TO_COUNT: Admission = { stored: () => undefined, release: () => undefined };
/** The tally key of calls without a token (inbound schemes); token ids are never empty. */
const NO_TOKEN = '';

/** Calls admitted by this gateway, in total and per token. */
class Tally {
  total = 0;
  readonly byToken = new Map<string, number>();

  of(tokenId: string): number {
    return this.byToken.get(tokenId) ?? 0;
  }

  add(tokenId: string, n: number): void {
    this.total += n;
    this.byToken.set(tokenId, this.of(tokenId) + n);
  }

  merge(other: Tally): void {
    for (const [tokenId, n] of other.byToken) this.add(tokenId, n);
  }
}

/**
 * The in-flight count of one bot as this gateway knows it: the store's count when last read, plus
 * this gateway's calls the count may not show: those admitted whose invocation is not stored yet
 * (`pending`), those stored since the last read started (`recent`), and, while a read is under way,
 * those stored before it started (`beforeRead`: the read sees them, but has not answered yet).
 */
interface InFlight {
  stored: ActiveCount;
  readAt: number;
  pending: Tally;
  recent: Tally;
  beforeRead: Tally;
  reading: Promise<void> | null;
  usedAt: number;
}

interface Cached<T> {
  /** Null until first read. */
  value: T | null;
  readAt: number;
  reading: Promise<T> | null;
  usedAt: number;
}

const rateLimited = (scope: QuotaScope, limit: RateLimit, waitSeconds: number) =>
  new GiError('rate_limited', 'Too many requests', `The rate limit of ${limit.perSecond} calls per second for this ${scope} was exceeded.`, {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(waitSeconds))) },
    extensions: { scope, quota: 'ratePerSecond', limit: limit.perSecond },
  });

const tooManyInFlight = (scope: QuotaScope, limit: number) =>
  new GiError(
    'rate_limited',
    'Too many requests',
    `This ${scope} already has ${limit} invocation${limit === 1 ? '' : 's'} in flight (queued or running), its limit; try again once one finishes.`,
    { headers: { 'Retry-After': '1' }, extensions: { scope, quota: 'maxInFlight', limit } },
  );

/**
 * Enforces the quotas of bots and tokens at the gateway, without a store round trip per call.
 *
 * Rates: token buckets in memory. With N gateways alive, each enforces rate/N with burst/N (the
 * store's instance registry tells N), so together they hold the limit while the load is spread evenly.
 *
 * In flight: the store's count of Queued and Running invocations, read at most every COUNT_CACHE_MS
 * per bot, plus this gateway's calls the count may not show yet. Beyond those, each gateway admits at
 * most ceil(headroom / N), so together they exceed the limit by at most N - 1. A gateway that used up
 * its share reads the count again before it refuses.
 */
export class QuotaGate {
  private readonly buckets = new TokenBuckets();
  private readonly quotas = new Map<string, Cached<BotQuotas>>();
  private readonly inFlight = new Map<string, InFlight>();
  private prunedAt: number;

  constructor(private readonly deps: QuotaGateDeps) {
    this.prunedAt = deps.clock.now();
  }

  /**
   * Lets a call of `tokenId` (of `botId`) through, or throws 429 with Retry-After (503 when the store
   * cannot tell). A call its integration's inbound scheme verified has no token (null): the bot's quotas
   * alone apply to it.
   */
  async admit(botId: string, tokenId: string | null): Promise<Admission> {
    try {
      return await this.check(botId, tokenId);
    } catch (error) {
      if (error instanceof GiError) throw error;
      throw unavailable('The quotas of this bot could not be checked; nothing was accepted. Try again.');
    }
  }

  private async check(botId: string, tokenOrNone: string | null): Promise<Admission> {
    const now = this.deps.clock.now();
    this.pruneNow(now);
    const quotas = await this.quotasOf(botId, now);
    const bot = botLimits(quotas.bot, this.deps.defaults);
    const token = tokenLimits(tokenOrNone === null ? undefined : quotas.tokens[tokenOrNone]);
    // The calls without a token are counted together under a key no token id has.
    const tokenId = tokenOrNone ?? NO_TOKEN;
    const peers = Math.max(1, this.deps.peers());

    const spent: string[] = [];
    const refund = () => spent.forEach((key) => this.buckets.refund(key));
    for (const [scope, key, rate] of [
      ['bot', `bot/${botId}`, bot.rate],
      ['token', `token/${botId}/${tokenId}`, token.rate],
    ] as const) {
      if (!rate) continue;
      const wait = this.buckets.wait(key, shareOf(rate, peers), now);
      if (wait > 0) {
        refund();
        throw this.refused(rateLimited(scope, rate, wait), scope, 'ratePerSecond');
      }
      this.buckets.take(key);
      spent.push(key);
    }
    if (bot.maxInFlight === null && token.maxInFlight === null) return NOTHING_TO_COUNT;
    try {
      return await this.reserve(botId, tokenId, bot.maxInFlight, token.maxInFlight, peers);
    } catch (error) {
      refund();
      throw error;
    }
  }

  private refused(error: GiError, scope: QuotaScope, quota: QuotaName): GiError {
    this.deps.onRefused?.(scope, quota);
    return error;
  }

  /** Counts the call as in flight on this gateway until a read of the store's count is sure to show it. */
  private async reserve(botId: string, tokenId: string, botMax: number | null, tokenMax: number | null, peers: number): Promise<Admission> {
    const entry = await this.inFlightOf(botId);
    let over = this.overLimit(entry, tokenId, botMax, tokenMax, peers);
    if (over && this.deps.clock.now() - entry.readAt >= COUNT_MIN_AGE_MS) {
      await this.read(botId, entry);
      over = this.overLimit(entry, tokenId, botMax, tokenMax, peers);
    }
    if (over) throw this.refused(tooManyInFlight(over.scope, over.limit), over.scope, 'maxInFlight');
    entry.pending.add(tokenId, 1);
    let settled = false;
    const settle = (stored: boolean) => {
      if (settled) return;
      settled = true;
      entry.pending.add(tokenId, -1);
      if (stored) entry.recent.add(tokenId, 1);
    };
    return { stored: () => settle(true), release: () => settle(false) };
  }

  /** This gateway's calls the last read of the store's count may not show. */
  private unseen(entry: InFlight, tokenId?: string): number {
    const tallies = [entry.pending, entry.recent, entry.beforeRead];
    return tallies.reduce((sum, tally) => sum + (tokenId === undefined ? tally.total : tally.of(tokenId)), 0);
  }

  private overLimit(entry: InFlight, tokenId: string, botMax: number | null, tokenMax: number | null, peers: number) {
    const share = (max: number, stored: number) => Math.ceil((max - stored) / peers);
    if (botMax !== null && this.unseen(entry) >= share(botMax, entry.stored.total)) return { scope: 'bot' as const, limit: botMax };
    if (tokenMax !== null && this.unseen(entry, tokenId) >= share(tokenMax, entry.stored.byToken[tokenId] ?? 0)) return { scope: 'token' as const, limit: tokenMax };
    return null;
  }

  private async inFlightOf(botId: string): Promise<InFlight> {
    const now = this.deps.clock.now();
    let entry = this.inFlight.get(botId);
    if (!entry) {
      entry = { stored: { total: 0, byToken: {} }, readAt: 0, pending: new Tally(), recent: new Tally(), beforeRead: new Tally(), reading: null, usedAt: now };
      this.inFlight.set(botId, entry);
    }
    entry.usedAt = now;
    if (entry.readAt === 0) await this.read(botId, entry);
    else if (now - entry.readAt >= COUNT_CACHE_MS) void this.read(botId, entry).catch(() => undefined);
    return entry;
  }

  private read(botId: string, entry: InFlight): Promise<void> {
    if (entry.reading) return entry.reading;
    const startedAt = this.deps.clock.now();
    entry.beforeRead = entry.recent;
    entry.recent = new Tally();
    entry.reading = this.deps.invocations.countActive(botId, startedAt).then(
      (stored) => {
        entry.stored = stored;
        entry.readAt = startedAt;
        entry.beforeRead = new Tally();
        entry.reading = null;
      },
      (error: unknown) => {
        // Nothing learnt: what was admitted still counts.
        entry.recent.merge(entry.beforeRead);
        entry.beforeRead = new Tally();
        entry.reading = null;
        throw error;
      },
    );
    return entry.reading;
  }

  private async quotasOf(botId: string, now: number): Promise<BotQuotas> {
    let entry = this.quotas.get(botId);
    if (!entry) {
      entry = { value: null, readAt: 0, reading: null, usedAt: now };
      this.quotas.set(botId, entry);
    }
    entry.usedAt = now;
    const age = now - entry.readAt;
    // Never older than QUOTA_CACHE_MS; a busy bot's quotas are read again in the background before that.
    if (entry.value === null || age >= QUOTA_CACHE_MS) return this.readQuotas(botId, entry);
    if (age >= QUOTA_CACHE_MS / 2) void this.readQuotas(botId, entry).catch(() => undefined);
    return entry.value;
  }

  private readQuotas(botId: string, entry: Cached<BotQuotas>): Promise<BotQuotas> {
    if (!entry.reading) {
      const startedAt = this.deps.clock.now();
      entry.reading = this.deps.catalog
        .getQuotas(botId)
        .then((value) => {
          entry.value = value;
          entry.readAt = startedAt;
          return value;
        })
        .finally(() => (entry.reading = null));
    }
    return entry.reading;
  }

  private pruneNow(now: number): void {
    if (now - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = now;
    this.buckets.prune(now);
    for (const [botId, entry] of this.quotas) if (now - entry.usedAt > PRUNE_EVERY_MS && !entry.reading) this.quotas.delete(botId);
    // What an idle bot's entry admitted is long in the store's count, unless a call is still being stored.
    for (const [botId, entry] of this.inFlight) {
      if (now - entry.usedAt > PRUNE_EVERY_MS && !entry.reading && entry.pending.total === 0) this.inFlight.delete(botId);
    }
  }
}
