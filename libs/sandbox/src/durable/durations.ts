import { SandboxError } from '../host/host-module';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** The longest sleep, retry delay, step timeout or event wait: a year (an invocation lives 30 days by default). */
export const MAX_WAIT_MS = 365 * DAY;

const UNITS: ReadonlyMap<string, number> = new Map(Object.entries({
  ms: 1,
  millisecond: 1,
  milliseconds: 1,
  s: SECOND,
  sec: SECOND,
  secs: SECOND,
  second: SECOND,
  seconds: SECOND,
  m: MINUTE,
  min: MINUTE,
  mins: MINUTE,
  minute: MINUTE,
  minutes: MINUTE,
  h: HOUR,
  hr: HOUR,
  hrs: HOUR,
  hour: HOUR,
  hours: HOUR,
  d: DAY,
  day: DAY,
  days: DAY,
  w: 7 * DAY,
  week: 7 * DAY,
  weeks: 7 * DAY,
}));

const DURATION_TEXT = /^\s*(\d+(?:\.\d+)?)\s*([a-z]+)\s*$/i;
/** ISO 8601: a date (midnight UTC), or a date and time with its zone (`Z` or `+02:00`). */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i;

/** A value as an error message shows it: short, whatever it is. */
export const shown = (value: unknown): string => {
  const text = typeof value === 'string' || (typeof value === 'object' && value !== null) ? (JSON.stringify(value) ?? String(value)) : String(value);
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
};

/**
 * A duration in milliseconds: a number of them, or a text like "30 seconds", "5 minutes", "2 hours",
 * "1 day" (also "500 ms", "1.5 hours", "2 weeks"); from 0 to MAX_WAIT_MS. A TypeError names `what`.
 */
export function durationMs(value: unknown, what: string): number {
  const refuse = () =>
    new SandboxError(
      'TypeError',
      `${what} must be a duration: milliseconds (a number from 0) or a text like "30 seconds", "5 minutes", "2 hours" or "1 day", at most 365 days; not ${shown(value)}.`,
    );
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (typeof value === 'string') {
    const match = DURATION_TEXT.exec(value);
    const unit = match ? UNITS.get(match[2].toLowerCase()) : undefined;
    if (!match || unit === undefined) throw refuse();
    ms = Number(match[1]) * unit;
  } else throw refuse();
  if (!Number.isFinite(ms) || ms < 0 || ms > MAX_WAIT_MS) throw refuse();
  return Math.round(ms);
}

/** A point in time in milliseconds since the epoch: a Date's time (the sandbox sends it), a timestamp, or an ISO 8601 text; at most MAX_WAIT_MS from `now`. */
export function wakeTime(value: unknown, now: number, what: string): number {
  let at = NaN;
  if (typeof value === 'number') at = value;
  else if (typeof value === 'string' && ISO_TIME.test(value)) at = Date.parse(value);
  if (!Number.isFinite(at)) {
    throw new SandboxError(
      'TypeError',
      `${what} expects a valid Date, a timestamp in milliseconds or an ISO 8601 text with its time zone ("2026-12-01T09:00:00Z"); not ${shown(value)}.`,
    );
  }
  if (at > now + MAX_WAIT_MS) throw new SandboxError('TypeError', `${what} is more than 365 days ahead (${new Date(at).toISOString()}).`);
  return at;
}
