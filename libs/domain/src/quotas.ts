/**
 * Quotas of a bot and of its tokens: a call rate (requests per second with a burst) and a maximum of
 * invocations in flight (Queued + Running). A null member means "the default": for a bot, the service
 * settings (BOT_RATE_LIMIT_PER_SECOND, BOT_RATE_LIMIT_BURST, BOT_MAX_IN_FLIGHT); for a token, no limit
 * of its own (the bot's still applies).
 */
export interface Quotas {
  ratePerSecond: number | null;
  /** Calls allowed at once before the rate applies; null with a rate set: the rate, rounded up. */
  burst: number | null;
  maxInFlight: number | null;
}

/** The quotas of one bot and of those of its tokens that have their own. */
export interface BotQuotas {
  bot: Quotas;
  tokens: Record<string, Quotas>;
}

/** A gateway reads a bot's quotas again after this long: a change made in the control API applies within it. */
export const QUOTA_CACHE_MS = 5_000;

export const DEFAULT_QUOTAS: Quotas = { ratePerSecond: null, burst: null, maxInFlight: null };

/** The service's defaults for bots; 0 means no limit. */
export interface QuotaDefaults {
  ratePerSecond: number;
  burst: number | null;
  maxInFlight: number;
}

export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** What is enforced; null members are not limited. */
export interface EffectiveLimits {
  rate: RateLimit | null;
  maxInFlight: number | null;
}

const rateOf = (perSecond: number, burst: number | null): RateLimit => ({ perSecond, burst: burst ?? Math.max(1, Math.ceil(perSecond)) });

export function botLimits(quotas: Quotas, defaults: QuotaDefaults): EffectiveLimits {
  const rate =
    quotas.ratePerSecond !== null
      ? rateOf(quotas.ratePerSecond, quotas.burst)
      : defaults.ratePerSecond > 0
        ? rateOf(defaults.ratePerSecond, defaults.burst)
        : null;
  const maxInFlight = quotas.maxInFlight ?? (defaults.maxInFlight > 0 ? defaults.maxInFlight : null);
  return { rate, maxInFlight };
}

export function tokenLimits(quotas: Quotas | undefined): EffectiveLimits {
  return {
    rate: quotas?.ratePerSecond != null ? rateOf(quotas.ratePerSecond, quotas.burst) : null,
    maxInFlight: quotas?.maxInFlight ?? null,
  };
}

/**
 * A gateway's share of a limit when `peers` gateways (itself included) enforce it together: the rate
 * and the burst divided among them, at least one call of burst so every gateway can admit something.
 */
export function shareOf(limit: RateLimit, peers: number): RateLimit {
  const n = Math.max(1, peers);
  return { perSecond: limit.perSecond / n, burst: Math.max(1, limit.burst / n) };
}
