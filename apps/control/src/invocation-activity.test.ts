import type { InvocationTiming } from '@gi/domain';
import { activityStart, MINUTE_MS, percentile, summarizeActivity } from './invocation-activity';

const now = Date.UTC(2026, 0, 1, 12, 30, 20);
const thisMinute = Date.UTC(2026, 0, 1, 12, 30);

function timing(integrationId: string, minutesAgo: number, runMs: number | null, status: InvocationTiming['status'] = 'Completed'): InvocationTiming {
  const createdAt = thisMinute - minutesAgo * MINUTE_MS + 5_000;
  const startedAt = runMs === null ? null : createdAt + 10;
  return { integrationId, status, createdAt, startedAt, finishedAt: startedAt === null || runMs === null ? null : startedAt + runMs };
}

describe('invocation activity', () => {
  it('starts the window so that its last minute is the current one', () => {
    expect(activityStart(now, 60)).toBe(thisMinute - 59 * MINUTE_MS);
    expect(activityStart(thisMinute, 1)).toBe(thisMinute);
  });

  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(values, 50), percentile(values, 99), percentile(values, 100)]).toEqual([50, 99, 100]);
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNull();
  });

  it('counts invocations per minute, oldest minute first, with failures apart', () => {
    const activity = summarizeActivity([timing('ack', 0, 5), timing('ack', 0, 7, 'Failed'), timing('ack', 2, 9), timing('slow', 59, 1000)], now, 60);
    expect(activity.from).toBe(thisMinute - 59 * MINUTE_MS);
    expect(activity.to).toBe(now);
    expect(activity.total.perMinute).toHaveLength(60);
    expect(activity.total.perMinute[59]).toBe(2);
    expect(activity.total.perMinute[57]).toBe(1);
    expect(activity.total.perMinute[0]).toBe(1);
    expect(activity.total.failedPerMinute[59]).toBe(1);
    expect(activity.total).toMatchObject({ count: 4, failed: 1 });
  });

  it('gives each integration its own series and percentiles, busiest first', () => {
    const timings = [
      ...Array.from({ length: 99 }, (_, i) => timing('ack', i % 10, 10 + i)),
      timing('ack', 1, 5000),
      timing('ack', 1, null, 'Running'),
      timing('slow', 3, 2000),
    ];
    const { integrations } = summarizeActivity(timings, now, 60);
    expect(integrations.map((i) => [i.integrationId, i.count])).toEqual([
      ['ack', 101],
      ['slow', 1],
    ]);
    // 100 finished runs of ack: 10..108 ms and one of 5000 ms; the running one has no duration yet.
    expect(integrations[0]).toMatchObject({ p50Ms: 59, p99Ms: 108 });
    expect(integrations[1]).toMatchObject({ p50Ms: 2000, p99Ms: 2000 });
  });

  it('leaves out what was created before the window and reports no percentiles without finished runs', () => {
    const activity = summarizeActivity([timing('old', 60, 5), timing('queued', 0, null, 'Queued')], now, 60);
    expect(activity.total.count).toBe(1);
    expect(activity.integrations).toEqual([expect.objectContaining({ integrationId: 'queued', count: 1, p50Ms: null, p99Ms: null })]);
  });
});
