import { SandboxError } from '../host/host-module';
import { durationMs, MAX_WAIT_MS, shown } from './durations';

export const BACKOFFS = ['constant', 'linear', 'exponential'] as const;
export type Backoff = (typeof BACKOFFS)[number];

/** Attempts after the first a step may make at most. */
export const MAX_RETRIES = 1000;

/** `Context.Step`'s options, checked, with their defaults: no retries, no time limit per attempt. */
export interface StepOptions {
  retries: { limit: number; delayMs: number; backoff: Backoff };
  /** Each attempt's time limit; null for none (the run's own limits bound it). */
  timeoutMs: number | null;
}

/** An event wait's timeout when `Context.WaitForEvent` names none. */
export const DEFAULT_EVENT_TIMEOUT_MS = 24 * 60 * 60 * 1000;
const DEFAULT_RETRY_DELAY_MS = 1000;

const refuse = (message: string) => new SandboxError('TypeError', message);

/** An options object as the host receives it (JSON data); undefined and null give {}. */
function fields(value: unknown, what: string, known: readonly string[]): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) throw refuse(`${what} must be an object like { ${known.join(', ')} }; not ${shown(value)}.`);
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) throw refuse(`${what}: ${shown(key)} is not an option (${known.join(', ')}).`);
  }
  return value as Record<string, unknown>;
}

/** `{ retries: { limit, delay, backoff }, timeout }`, each checked; a TypeError says what is wrong. */
export function stepOptions(value: unknown): StepOptions {
  const given = fields(value, 'Context.Step options', ['retries', 'timeout']);
  const retries = fields(given.retries, 'Context.Step options.retries', ['limit', 'delay', 'backoff']);
  let limit = 0;
  if (given.retries !== undefined && given.retries !== null) {
    limit = retries.limit as number;
    if (!Number.isInteger(limit) || limit < 0 || limit > MAX_RETRIES) {
      throw refuse(`Context.Step options.retries.limit must be a whole number from 0 to ${MAX_RETRIES} (attempts after the first); not ${shown(retries.limit)}.`);
    }
  }
  const backoff = (retries.backoff ?? 'exponential') as Backoff;
  if (!BACKOFFS.includes(backoff)) throw refuse(`Context.Step options.retries.backoff must be 'constant', 'linear' or 'exponential'; not ${shown(retries.backoff)}.`);
  const delayMs = retries.delay === undefined ? DEFAULT_RETRY_DELAY_MS : durationMs(retries.delay, 'Context.Step options.retries.delay');
  let timeoutMs: number | null = null;
  if (given.timeout !== undefined && given.timeout !== null) {
    timeoutMs = durationMs(given.timeout, 'Context.Step options.timeout');
    if (timeoutMs === 0) throw refuse('Context.Step options.timeout must be longer than 0.');
  }
  return { retries: { limit, delayMs, backoff }, timeoutMs };
}

/** How long a step waits before its next attempt, after attempt `failed` (from 1) failed. */
export function retryDelayMs({ delayMs, backoff }: StepOptions['retries'], failed: number): number {
  const factor = backoff === 'constant' ? 1 : backoff === 'linear' ? failed : 2 ** Math.min(failed - 1, 64);
  return Math.min(MAX_WAIT_MS, delayMs * factor);
}

/** `Context.WaitForEvent`'s `{ timeout }`: how long it waits (DEFAULT_EVENT_TIMEOUT_MS when not given). */
export function eventTimeoutMs(value: unknown): number {
  const given = fields(value, 'Context.WaitForEvent options', ['timeout']);
  return given.timeout === undefined || given.timeout === null ? DEFAULT_EVENT_TIMEOUT_MS : durationMs(given.timeout, 'Context.WaitForEvent options.timeout');
}
