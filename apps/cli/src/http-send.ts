import { CliError } from './cli-errors';

/** The service could not be reached at all (refused, reset, DNS): worth retrying while polling. */
export class UnreachableError extends CliError {
  constructor(url: string, reason: string) {
    super(`cannot reach the service at ${new URL(url).origin}: ${reason}. Is it running (gi up)? Set --url or GI_URL to point elsewhere`);
    this.name = 'UnreachableError';
  }
}

/** fetch with a clear message when the connection fails; the request headers (tokens) never appear in it. */
export async function send(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const reason = networkReason(error);
    // fetch gives up on a reply after 300 s, the service's own sync limit by default.
    if (reason === 'UND_ERR_HEADERS_TIMEOUT' || reason === 'UND_ERR_BODY_TIMEOUT') {
      throw new CliError(`the service at ${new URL(url).origin} did not answer in time (${reason}); use --async for long runs`);
    }
    throw new UnreachableError(url, reason);
  }
}

function networkReason(error: unknown): string {
  // fetch errors may come from another realm (test runners): read them by shape, not instanceof.
  const record = (value: unknown) => (typeof value === 'object' && value !== null ? (value as { code?: unknown; message?: unknown; cause?: unknown }) : {});
  const cause = record(record(error).cause);
  if (typeof cause.code === 'string') return cause.code;
  if (typeof cause.message === 'string' && cause.message) return cause.message;
  const message = record(error).message;
  return typeof message === 'string' ? message : String(error);
}
