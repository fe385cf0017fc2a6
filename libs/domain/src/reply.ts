import { toGiError } from './errors';
import type { Invocation } from './invocation';
import { renderResponseBody } from './render';
import type { RenderedBody } from './render';

/**
 * The reply for a finished invocation, the same for the sync call and for every poll: the rendered
 * ResponseBody, or the recorded error or cancellation (thrown as a GiError carrying the invocationId).
 */
export function finalReply(invocation: Invocation, mediaType = invocation.responseContentType): RenderedBody {
  const { outcome } = invocation;
  if (!outcome) throw new Error(`invocation ${invocation.id} has no outcome yet`);
  if (outcome.status !== 'Completed') throw toGiError(outcome.error, invocation.id);
  return renderResponseBody(outcome.responseBody, mediaType);
}

/** The body of a 202 while an invocation is not finished. */
export function pendingReply(invocation: Pick<Invocation, 'id' | 'status' | 'progress'>) {
  return {
    invocationId: invocation.id,
    status: 'Running' as const,
    message: 'The job is not yet complete.',
    ...(invocation.progress ? { progress: invocation.progress } : {}),
  };
}
