import { durationMs } from '@gi/domain';
import type { InvocationTiming } from '@gi/domain';

export const MINUTE_MS = 60_000;

/** What the console charts for a bot or one integration: calls per minute and run-time percentiles. */
export interface ActivitySeries {
  /** Invocations created in each minute of the window, oldest minute first. */
  perMinute: number[];
  /** Of those, the ones that failed. */
  failedPerMinute: number[];
  count: number;
  failed: number;
  /** Run time (start to finish of the last attempt) of the finished invocations; null when none finished. */
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface Activity {
  /** Start of the first minute; the last minute is the current one, still filling. */
  from: number;
  to: number;
  total: ActivitySeries;
  integrations: Array<{ integrationId: string } & ActivitySeries>;
}

/** The start of a window of `minutes` whole minutes that ends with the minute holding `now`. */
export const activityStart = (now: number, minutes: number) => Math.floor(now / MINUTE_MS) * MINUTE_MS - (minutes - 1) * MINUTE_MS;

/** Nearest-rank percentile of ascending values. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

function series(timings: InvocationTiming[], from: number, minutes: number): ActivitySeries {
  const perMinute = new Array<number>(minutes).fill(0);
  const failedPerMinute = new Array<number>(minutes).fill(0);
  const durations: number[] = [];
  let count = 0;
  for (const timing of timings) {
    const minute = Math.floor((timing.createdAt - from) / MINUTE_MS);
    if (minute < 0 || minute >= minutes) continue;
    count += 1;
    perMinute[minute] += 1;
    if (timing.status === 'Failed') failedPerMinute[minute] += 1;
    const ms = durationMs(timing);
    if (ms !== null) durations.push(ms);
  }
  durations.sort((a, b) => a - b);
  const failed = failedPerMinute.reduce((sum, n) => sum + n, 0);
  return { perMinute, failedPerMinute, count, failed, p50Ms: percentile(durations, 50), p99Ms: percentile(durations, 99) };
}

/** Buckets invocations by the minute they were created in, for the whole bot and per integration. */
export function summarizeActivity(timings: InvocationTiming[], now: number, minutes: number): Activity {
  const from = activityStart(now, minutes);
  const byIntegration = new Map<string, InvocationTiming[]>();
  for (const timing of timings) {
    const list = byIntegration.get(timing.integrationId) ?? [];
    list.push(timing);
    byIntegration.set(timing.integrationId, list);
  }
  const integrations = [...byIntegration.entries()]
    .map(([integrationId, list]) => ({ integrationId, ...series(list, from, minutes) }))
    .filter((entry) => entry.count > 0)
    .sort((a, b) => b.count - a.count || a.integrationId.localeCompare(b.integrationId));
  return { from, to: now, total: series(timings, from, minutes), integrations };
}
