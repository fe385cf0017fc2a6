import { toGiError } from './errors';
import type { Invocation } from './invocation';
import { renderResponseBody } from './render';
import type { RenderedBody } from './render';

/**
 * The reply for a finished invocation, the same for the sync call and for every poll: the rendered
 * ResponseBody, or the recorded error or cancellation (thrown as a GiError carrying the invocationId).
 */
export function finalReply(invocation: Pick<Invocation, 'id' | 'outcome' | 'responseContentType'>, mediaType = invocation.responseContentType): RenderedBody {
  const { outcome } = invocation;
  if (!outcome) throw new Error(`invocation ${invocation.id} has no outcome yet`);
  if (outcome.status !== 'Completed') throw toGiError(outcome.error, invocation.id);
  return renderResponseBody(outcome.responseBody, mediaType);
}

/**
 * The body of a 202 while an invocation is not finished: where it stands (Queued or Running), which
 * attempt it is on, since when the running one started, and the connector's last `Context.SetProgress`, if any.
 */
export function pendingReply(invocation: Pick<Invocation, 'id' | 'status' | 'attempt' | 'startedAt' | 'progress'>) {
  return {
    invocationId: invocation.id,
    status: invocation.status,
    message: 'The job is not yet complete.',
    attempt: invocation.attempt,
    // Only of the running attempt: a requeued invocation waits for its next one.
    startedAt: invocation.status === 'Running' && invocation.startedAt !== null ? new Date(invocation.startedAt).toISOString() : null,
    ...(invocation.progress ? { progress: invocation.progress } : {}),
  };
}
