import { badRequest, GiError } from './errors';

/** The longest Idempotency-Key accepted (characters of the key itself, without quotes). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * What the store keeps of an Idempotency-Key, per bot: a fingerprint of the request first sent with it
 * and the invocation that request created. It lives until `expireAt`, never longer than its invocation.
 */
export interface IdempotencyRecord {
  botId: string;
  key: string;
  /** Identifies the request first sent with the key; a repeat must match it. */
  fingerprint: string;
  invocationId: string;
  createdAt: number;
  expireAt: number;
}

/** A Structured Field String: printable ASCII in double quotes, `\"` and `\\` the only escapes. */
const SF_STRING = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;
/** The unquoted form many clients send: visible ASCII without quotes, commas, semicolons or backslashes. */
const BARE_KEY = /^[\x21\x23-\x2b\x2d-\x3a\x3c-\x5b\x5d-\x7e]+$/;

/**
 * The Idempotency-Key of a request (the IETF httpapi draft: a Structured Field String such as
 * `"8e03978e-40d5"`; the unquoted form `8e03978e-40d5` is accepted too), or null when none was sent.
 * `values` holds every Idempotency-Key header of the request. More than one header, an empty, malformed
 * or over-long key: 400.
 */
export function parseIdempotencyKey(values: readonly string[]): string | null {
  if (values.length === 0) return null;
  if (values.length > 1) throw badRequest('The Idempotency-Key header may be sent only once.');
  const value = values[0].trim();
  const quoted = SF_STRING.exec(value);
  const key = quoted ? quoted[1].replace(/\\(["\\])/g, '$1') : BARE_KEY.test(value) ? value : null;
  if (key === null) {
    throw badRequest('The Idempotency-Key header is malformed: send a quoted string of printable ASCII characters, e.g. Idempotency-Key: "8e03978e-40d5".');
  }
  if (key.length === 0) throw badRequest('The Idempotency-Key header is empty.');
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw badRequest(`The Idempotency-Key is longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
  }
  return key;
}

/** 409: the first request with this key has not finished; its invocation can be polled. */
export const idempotencyKeyInUse = (invocationId: string, location: string) =>
  new GiError(
    'idempotency_key_in_use',
    'Request in progress',
    'A request with this Idempotency-Key is still being processed; poll its invocation, or repeat the request once it has finished.',
    { extensions: { invocationId }, headers: { Location: location, 'Retry-After': '1' } },
  );

/** 422: the key was first sent with another request (another body, query, path or content type). */
export const idempotencyKeyReused = () =>
  new GiError(
    'idempotency_key_reused',
    'Idempotency-Key reused',
    'This Idempotency-Key was first sent with a different request (path, query, content type or body); use a new key for a new request.',
  );
