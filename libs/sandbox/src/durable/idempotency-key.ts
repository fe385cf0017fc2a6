import { hash } from 'node:crypto';

/**
 * The idempotency key a step's function gets: the same for a bot, invocation, step name and occurrence
 * on every attempt and every executor, different for anything else. 43 characters of [A-Za-z0-9_-]
 * (SHA-256 in base64url), so any provider's `Idempotency-Key` takes it.
 */
export const stepIdempotencyKey = (botId: string, invocationId: string, name: string, occurrence: number): string =>
  hash('sha256', JSON.stringify([botId, invocationId, name, occurrence]), 'base64url');
