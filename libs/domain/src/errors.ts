/**
 * Domain errors carry a stable code and no HTTP status: the HTTP layer maps codes to statuses
 * (libs/http problem table). `detail` is safe to show to the caller; never put secrets in it.
 */
export const ErrorCodes = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'not_found',
  'method_not_allowed',
  'request_timeout', // the client took too long to send its request
  'payload_too_large',
  'headers_too_large', // the request line and headers are over the server's limit
  'unsupported_media_type',
  'idempotency_key_in_use', // the first request with this Idempotency-Key is still being processed
  'idempotency_key_reused', // the Idempotency-Key was first sent with a different request
  'connector_error', // Context.RaiseError(title, message)
  'rate_limited',
  'connector_failed', // the connector threw or broke a limit
  'unavailable',
  'timeout', // the connector or the sync wait ran out of time
  'not_implemented',
  'internal',
  'cancelled', // the invocation was cancelled before it finished
  'already_finished', // a cancellation came after the invocation finished
  'secrets_not_configured', // a secret write while no SECRETS_KEY is configured
  'in_use', // a deletion of what invocations in flight or integrations still use
  // A webhook call refused by its integration's inbound auth (docs/inbound.md): every one a 401.
  'missing_signature', // no credential of the integration's scheme (a bearer token alone included, unless allowed)
  'bad_signature', // a signature that is malformed, repeated, or matches no key
  'timestamp_outside_tolerance', // a signed timestamp too old or too new
  'unknown_key', // a key (api-key, basic) no secret holds, or no key configured to check against
  'insufficient_storage', // an upload past the bot's storage quota, or the disk down to its free-space reserve
] as const;
export type ErrorCode = (typeof ErrorCodes)[number];

export interface ErrorDetails {
  /** Extra members of the problem document (invocationId, errors, ...). */
  extensions?: Record<string, unknown>;
  /** Response headers the HTTP layer should add (Retry-After, Location, ...). */
  headers?: Record<string, string>;
}

export class GiError extends Error {
  readonly code: ErrorCode;
  readonly title: string;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, title: string, detail: string, details: ErrorDetails = {}) {
    super(`${title}: ${detail}`);
    this.name = 'GiError';
    this.code = code;
    this.title = title;
    this.detail = detail;
    this.extensions = details.extensions ?? {};
    this.headers = details.headers ?? {};
  }
}

export const badRequest = (detail: string, details?: ErrorDetails) => new GiError('bad_request', 'Bad request', detail, details);
export const notFound = (detail: string) => new GiError('not_found', 'Not found', detail);
export const payloadTooLarge = (detail: string) => new GiError('payload_too_large', 'Payload too large', detail);
export const unsupportedMediaType = (detail: string) =>
  new GiError('unsupported_media_type', 'Unsupported media type', detail);
export const unavailable = (detail: string, retryAfterSeconds = 5) =>
  new GiError('unavailable', 'Service unavailable', detail, { headers: { 'Retry-After': String(retryAfterSeconds) } });

/** The failure recorded on an invocation; rendered the same way for the sync reply and for every poll. */
export interface InvocationError {
  code: ErrorCode;
  title: string;
  detail: string;
}

export const toGiError = (error: InvocationError, invocationId: string): GiError =>
  new GiError(error.code, error.title, error.detail, { extensions: { invocationId } });
