import { badRequest } from './errors';
import type { CatalogStore } from './ports/catalog-store';

/** The request header naming a callback URL for this one call. */
export const CALLBACK_HEADER = 'Callback-Url';
export const MAX_CALLBACK_URL_LENGTH = 2048;
/** Retries wait at most this long. */
const MAX_RETRY_DELAY_MS = 3600_000;

/** Null when `url` is acceptable as a callback URL, else what is wrong with it. */
export function callbackUrlProblem(url: string): string | null {
  if (url.length > MAX_CALLBACK_URL_LENGTH) return `it is longer than ${MAX_CALLBACK_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'it is not an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'only http and https URLs can receive callbacks';
  if (parsed.username || parsed.password) return 'it must not carry credentials';
  // Port 0 names no port: a connection to it would go to the scheme's default instead.
  if (parsed.port === '0') return 'port 0 is not a port a receiver can listen on';
  return null;
}

/**
 * Checks the Callback-Url header of a call, given as every value it was sent with (one per header
 * line): 400 when it was sent more than once (joined, two URLs would make a third) or cannot be a callback URL.
 */
export function parseCallbackHeader(values: readonly string[]): string {
  if (values.length !== 1) throw badRequest(`The ${CALLBACK_HEADER} header may be sent only once.`);
  const url = values[0].trim();
  const problem = callbackUrlProblem(url);
  if (problem) throw badRequest(`The ${CALLBACK_HEADER} header cannot be used: ${problem}.`);
  return url;
}

/**
 * How long to wait after failed attempt number `attempt` (1 for the first): `baseMs` times 4 per attempt
 * made, at most an hour, drawn at random between half of that and all of it, so receivers that come
 * back are not hit by every waiting callback at once.
 */
export function callbackRetryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const ceiling = Math.min(MAX_RETRY_DELAY_MS, baseMs * 4 ** (attempt - 1));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * Callbacks are signed with the bot's signing secret, so a callback URL (an integration's, or a call's
 * Callback-Url) is accepted only once the bot has one: 400 otherwise. `remedy` tells the reader how to
 * make one, in the terms of the API they called.
 */
export async function assertCanSignCallbacks(catalog: Pick<CatalogStore, 'getSigningSecrets'>, botId: string, now: number, remedy: string): Promise<void> {
  if ((await catalog.getSigningSecrets(botId, now)).length > 0) return;
  throw badRequest(`Callbacks are signed with the bot's signing secret, and bot '${botId}' has none yet; ${remedy}.`);
}
