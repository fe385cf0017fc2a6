import type { Context, Next } from 'koa';
import type { Logger } from '@gi/observability';
import { GiError } from '@gi/domain';
import type { ErrorCode } from '@gi/domain';
import { AuthRefusal } from '@gi/auth';
import { noteProblem } from './request-observer';

/** The one table from domain error codes to HTTP statuses. */
export const STATUS_OF: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  already_finished: 409,
  secrets_not_configured: 409,
  in_use: 409,
  cancelled: 410,
  request_timeout: 408,
  payload_too_large: 413,
  headers_too_large: 431,
  unsupported_media_type: 415,
  connector_error: 422,
  rate_limited: 429,
  internal: 500,
  not_implemented: 501,
  connector_failed: 500,
  unavailable: 503,
  insufficient_storage: 507,
  timeout: 504,
  idempotency_key_in_use: 409,
  idempotency_key_reused: 422,
  missing_signature: 401,
  bad_signature: 401,
  timestamp_outside_tolerance: 401,
  unknown_key: 401,
};

export const PROBLEM_TYPE_PREFIX = 'urn:gi:problem:';

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  [extension: string]: unknown;
}

export function problemOf(error: GiError): ProblemDocument {
  const problem: ProblemDocument = {
    type: `${PROBLEM_TYPE_PREFIX}${error.code.replace(/_/g, '-')}`,
    title: error.title,
    status: STATUS_OF[error.code],
    detail: error.detail,
  };
  for (const [name, value] of Object.entries(error.extensions)) if (!(name in problem)) problem[name] = value;
  return problem;
}

export function sendProblem(ctx: Context, error: GiError): void {
  const problem = problemOf(error);
  noteProblem(ctx, error.code, error instanceof AuthRefusal ? error.reason : undefined);
  ctx.status = problem.status;
  ctx.set('Cache-Control', 'no-store');
  for (const [name, value] of Object.entries(error.headers)) ctx.set(name, value);
  ctx.type = 'application/problem+json';
  ctx.body = JSON.stringify(problem);
}

/** Client errors thrown by Koa or its middleware (status + expose), e.g. a malformed URL. */
function fromHttpError(error: unknown): GiError | null {
  const e = error as { status?: number; expose?: boolean; message?: string };
  if (typeof e?.status !== 'number' || e.status < 400 || e.status >= 500 || !e.expose) return null;
  const code = (Object.entries(STATUS_OF).find(([, status]) => status === e.status)?.[0] ?? 'bad_request') as ErrorCode;
  return new GiError(code, 'Bad request', e.message ?? 'The request could not be processed.');
}

/**
 * Answers every error as RFC 9457 problem details. 4xx details reach the caller; anything unexpected
 * becomes a 500 with a generic text and is logged (never a stack trace, never a secret in the reply).
 */
export function problemDetails(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new GiError('not_found', 'Not found', `No route for ${ctx.method} ${ctx.path}.`);
      }
    } catch (error) {
      const known = error instanceof GiError ? error : fromHttpError(error);
      if (known) return sendProblem(ctx, known);
      const params = (ctx.params ?? {}) as Record<string, string | undefined>;
      logger.error(
        { err: error, code: 'internal', method: ctx.method, route: (ctx as Context & { _matchedRoute?: string })._matchedRoute, requestId: ctx.state.requestId, botId: params.botId, integrationId: params.integrationId },
        'unhandled error',
      );
      sendProblem(ctx, new GiError('internal', 'Internal server error', 'The request failed unexpectedly; it has been logged.'));
    }
  };
}
