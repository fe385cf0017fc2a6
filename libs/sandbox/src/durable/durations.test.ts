import fc from 'fast-check';
import { SandboxError } from '../host/host-module';
import { DEFAULT_EVENT_TIMEOUT_MS, eventTimeoutMs, MAX_RETRIES, retryDelayMs, stepOptions, type Backoff } from './durable-options';
import { durationMs, MAX_WAIT_MS, wakeTime } from './durations';

const DAY = 24 * 3_600_000;

/** What `fn` threw. */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('it did not throw');
}

/** The outcome of a parser: its value, or the kind of what it threw. */
function outcome<T>(parse: () => T): { value: T } | { threw: string } {
  try {
    return { value: parse() };
  } catch (error) {
    return { threw: error instanceof SandboxError ? error.kind : `not a SandboxError: ${String(error)}` };
  }
}

describe('durations', () => {
  it.each([
    [0, 0],
    [1500.4, 1500],
    ['500 ms', 500],
    ['30 seconds', 30_000],
    ['1 second', 1000],
    ['30s', 30_000],
    ['5 minutes', 300_000],
    ['5 MIN', 300_000],
    ['1.5 hours', 5_400_000],
    ['2 h', 7_200_000],
    ['1 day', DAY],
    [' 2 weeks ', 14 * DAY],
    ['365 days', 365 * DAY],
  ])('reads %p as %p ms', (text, ms) => {
    expect(durationMs(text, 'd')).toBe(ms);
  });

  it.each([-1, NaN, Infinity, 365 * DAY + 1, '5', 'soon', '5 fortnights', '-5 s', '1e3 ms', '5 constructor', '', null, {}, [5], true])('refuses %p with a TypeError naming what it reads', (value) => {
    expect(thrown(() => durationMs(value, 'The delay'))).toMatchObject({ kind: 'TypeError', message: expect.stringMatching(/^The delay must be a duration: milliseconds/) });
  });

  it('reads any text either as a whole number of milliseconds within a year, or refuses it with a TypeError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^\s*\d{1,6}(\.\d{1,3})?\s*(ms|s|m|h|d|w|seconds?|minutes?|hours?|days?|weeks?|x|MIN|Days)\s*$/)), (text) => {
        const result = outcome(() => durationMs(text, 'd'));
        if ('threw' in result) return expect(result.threw).toBe('TypeError');
        expect(Number.isInteger(result.value)).toBe(true);
        expect(result.value).toBeGreaterThanOrEqual(0);
        expect(result.value).toBeLessThanOrEqual(MAX_WAIT_MS);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads "<n> <unit>" as n times the unit', () => {
    const units = { ms: 1, seconds: 1000, minutes: 60_000, hours: 3_600_000, days: DAY } as const;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 365 }), fc.constantFrom(...(Object.keys(units) as Array<keyof typeof units>)), (n, unit) => {
        expect(durationMs(`${n} ${unit}`, 'd')).toBe(n * units[unit]);
      }),
    );
  });
});

describe('wake times', () => {
  const now = Date.UTC(2026, 5, 1);

  it('reads timestamps and ISO 8601 texts with their zone, or a date alone (midnight UTC)', () => {
    expect(wakeTime(12345, now, 'w')).toBe(12345);
    expect(wakeTime('2026-07-01T09:30:00Z', now, 'w')).toBe(Date.UTC(2026, 6, 1, 9, 30));
    expect(wakeTime('2026-07-01T09:30:00.250+02:00', now, 'w')).toBe(Date.UTC(2026, 6, 1, 7, 30, 0, 250));
    expect(wakeTime('2026-07-01', now, 'w')).toBe(Date.UTC(2026, 6, 1));
  });

  it.each(['2026-07-01T09:30', 'July 1st', '1751362200000', '', NaN, null, {}])('refuses %p, which names no single moment', (value) => {
    expect(thrown(() => wakeTime(value, now, 'Context.SleepUntil'))).toMatchObject({ kind: 'TypeError', message: expect.stringMatching(/^Context\.SleepUntil expects a valid Date/) });
  });

  it('refuses a time more than a year ahead, and takes any time before', () => {
    expect(() => wakeTime(now + MAX_WAIT_MS + 1, now, 'w')).toThrow(/more than 365 days ahead/);
    expect(wakeTime(now + MAX_WAIT_MS, now, 'w')).toBe(now + MAX_WAIT_MS);
    expect(wakeTime(0, now, 'w')).toBe(0);
  });

  it('reads any text as a finite time or refuses it with a TypeError', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.date({ noInvalidDate: true }).map((date) => date.toISOString())), (text) => {
        const result = outcome(() => wakeTime(text, now, 'w'));
        if ('threw' in result) return expect(result.threw).toBe('TypeError');
        expect(Number.isFinite(result.value)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('step options', () => {
  it('has no retries and no timeout unless asked; retries default to 1 second, exponential', () => {
    expect(stepOptions(undefined)).toEqual({ retries: { limit: 0, delayMs: 1000, backoff: 'exponential' }, timeoutMs: null });
    expect(stepOptions({ retries: { limit: 3 }, timeout: '30 seconds' })).toEqual({ retries: { limit: 3, delayMs: 1000, backoff: 'exponential' }, timeoutMs: 30_000 });
    expect(stepOptions({ retries: { limit: 2, delay: '5 minutes', backoff: 'linear' } })).toEqual({ retries: { limit: 2, delayMs: 300_000, backoff: 'linear' }, timeoutMs: null });
  });

  it('takes any value either as options within their bounds, or refuses it with a TypeError', () => {
    const retries = fc.oneof(
      fc.anything(),
      fc.record({ limit: fc.oneof(fc.integer({ min: -5, max: MAX_RETRIES + 5 }), fc.anything()), delay: fc.oneof(fc.nat(), fc.string()), backoff: fc.string() }, { requiredKeys: [] }),
    );
    fc.assert(
      fc.property(fc.oneof(fc.anything(), fc.record({ retries, timeout: fc.oneof(fc.nat(), fc.string(), fc.anything()) }, { requiredKeys: [] })), (value) => {
        // As the host receives it: JSON data.
        const result = outcome(() => stepOptions(JSON.parse(JSON.stringify(value) ?? 'null')));
        if ('threw' in result) return expect(result.threw).toBe('TypeError');
        const { retries: parsed, timeoutMs } = result.value;
        expect(Number.isInteger(parsed.limit) && parsed.limit >= 0 && parsed.limit <= MAX_RETRIES).toBe(true);
        expect(parsed.delayMs).toBeLessThanOrEqual(MAX_WAIT_MS);
        expect(timeoutMs === null || (timeoutMs > 0 && timeoutMs <= MAX_WAIT_MS)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('waits before each retry as its backoff says, never longer than a year', () => {
    const retries = (backoff: Backoff) => ({ limit: MAX_RETRIES, delayMs: 1000, backoff });
    expect([1, 2, 3, 4].map((failed) => retryDelayMs(retries('constant'), failed))).toEqual([1000, 1000, 1000, 1000]);
    expect([1, 2, 3, 4].map((failed) => retryDelayMs(retries('linear'), failed))).toEqual([1000, 2000, 3000, 4000]);
    expect([1, 2, 3, 4].map((failed) => retryDelayMs(retries('exponential'), failed))).toEqual([1000, 2000, 4000, 8000]);
    fc.assert(
      fc.property(fc.constantFrom<Backoff>('constant', 'linear', 'exponential'), fc.integer({ min: 0, max: MAX_WAIT_MS }), fc.integer({ min: 1, max: MAX_RETRIES + 1 }), (backoff, delayMs, failed) => {
        const delay = retryDelayMs({ limit: MAX_RETRIES, delayMs, backoff }, failed);
        expect(Number.isFinite(delay) && delay >= delayMs && delay <= MAX_WAIT_MS).toBe(true);
        expect(retryDelayMs({ limit: MAX_RETRIES, delayMs, backoff }, failed + 1)).toBeGreaterThanOrEqual(delay);
      }),
    );
  });

  it('gives an event wait 24 hours unless its timeout says otherwise', () => {
    expect(eventTimeoutMs(undefined)).toBe(DEFAULT_EVENT_TIMEOUT_MS);
    expect(DEFAULT_EVENT_TIMEOUT_MS).toBe(DAY);
    expect(eventTimeoutMs({ timeout: '10 minutes' })).toBe(600_000);
    expect(() => eventTimeoutMs({ timout: 1 })).toThrow('Context.WaitForEvent options: "timout" is not an option (timeout).');
  });
});
