import { LruMap } from '@gi/domain';
import type { Clock, Invocation, InvocationStore } from '@gi/domain';

/** Bounds of the Retry-After of a poll reply, in seconds. */
export const MIN_RETRY_AFTER_SECONDS = 1;
export const MAX_RETRY_AFTER_SECONDS = 30;
/** Retry-After when the integration has no finished run to learn from. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * When to poll again: the median of the integration's recent run times minus the time this run has
 * already taken (nothing yet while queued), in whole seconds within [1, 30]; 5 s without history.
 */
export function retryAfterSeconds(durationsMs: readonly number[], elapsedMs: number): number {
  if (durationsMs.length === 0) return DEFAULT_RETRY_AFTER_SECONDS;
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
  const remaining = Math.ceil((median - elapsedMs) / 1000);
  return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(MIN_RETRY_AFTER_SECONDS, remaining));
}

export interface RunTimesOptions {
  /** How many of the latest finished runs count. */
  sample: number;
  /** How long one integration's run times are reused before the store is asked again. */
  refreshMs: number;
  /** Integrations remembered at once; the least recently refreshed is forgotten first. */
  maxIntegrations: number;
}

const DEFAULTS: RunTimesOptions = { sample: 20, refreshMs: 10_000, maxIntegrations: 1000 };

/**
 * Recent run times per integration, read from the store (so every results and gateway process sees the
 * runs of every executor) and kept in memory for a few seconds: a busy poller costs one small indexed
 * query per integration per `refreshMs`, whatever the number of polls.
 */
export class RunTimes {
  private readonly cache: LruMap<string, { at: number; durations: Promise<number[]> }>;
  private readonly options: RunTimesOptions;

  constructor(
    private readonly store: Pick<InvocationStore, 'recentDurations'>,
    private readonly clock: Clock,
    options: Partial<RunTimesOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
    this.cache = new LruMap(this.options.maxIntegrations);
  }

  /**
   * The Retry-After, in seconds, of a poll reply for an unfinished invocation. A durable run suspended in
   * a wait is polled again when the wait ends (within the same bounds): an event may end it sooner.
   */
  async retryAfter(invocation: Pick<Invocation, 'botId' | 'integrationId' | 'status' | 'startedAt' | 'waiting'>): Promise<number> {
    const now = this.clock.now();
    if (invocation.status === 'Waiting' && invocation.waiting) {
      return Math.min(MAX_RETRY_AFTER_SECONDS, Math.max(MIN_RETRY_AFTER_SECONDS, Math.ceil((invocation.waiting.until - now) / 1000)));
    }
    const elapsed = invocation.status === 'Running' && invocation.startedAt !== null ? now - invocation.startedAt : 0;
    return retryAfterSeconds(await this.durations(invocation.botId, invocation.integrationId, now), elapsed);
  }

  private durations(botId: string, integrationId: string, now: number): Promise<number[]> {
    const key = `${botId}\n${integrationId}`;
    const cached = this.cache.get(key);
    if (cached && now - cached.at < this.options.refreshMs) return cached.durations;
    // A failed read is not remembered: the next poll asks again.
    const durations = this.store.recentDurations(botId, integrationId, this.options.sample).catch(() => {
      this.cache.delete(key);
      return [];
    });
    this.cache.set(key, { at: now, durations });
    return durations;
  }
}
