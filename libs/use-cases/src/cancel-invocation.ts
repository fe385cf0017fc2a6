import { cancelEvent, completionEvent } from '@gi/contracts';
import type { JobBus } from '@gi/contracts';
import { cancelledError, GiError, notFound } from '@gi/domain';
import type { Clock, InvocationRef, InvocationStore } from '@gi/domain';

export interface CancelDeps {
  invocations: InvocationStore;
  bus: Pick<JobBus, 'publishCancel' | 'publishCompletion'>;
  clock: Clock;
}

/** Who asked for a cancellation, as its outcome tells it. */
export type CancelledBy = 'control-api' | 'caller';

const DETAIL: Record<CancelledBy, string> = {
  'control-api': 'The invocation was cancelled through the control API before it finished.',
  caller: 'The invocation was cancelled by its caller before it finished.',
};

/**
 * Cancels a Queued or Running invocation. The store records Cancelled first (so a job delivered later
 * is dropped and a running attempt can no longer complete); then the bus tells the executor running
 * it to stop and wakes whoever waits for its outcome. Cancelling a cancelled invocation again changes
 * nothing and succeeds; one that completed or failed answers 409.
 *
 * Resolves `announced: false` when the bus could not carry the news: the executor then stops the run
 * at its next lease renewal, and waiting callers read Cancelled when their wait ends.
 */
export async function cancelInvocation(deps: CancelDeps, ref: InvocationRef, by: CancelledBy): Promise<{ announced: boolean }> {
  const cancelled = await deps.invocations.cancel(ref, cancelledError(DETAIL[by]), deps.clock.now());
  if (!cancelled) {
    const current = await deps.invocations.get(ref);
    if (!current) throw notFound(`No invocation '${ref.id.slice(0, 80)}' exists for this bot (unknown or expired).`);
    if (current.status === 'Cancelled') return { announced: true };
    throw new GiError('already_finished', 'Already finished', `The invocation already finished (${current.status}); there is nothing left to cancel.`, {
      extensions: { invocationId: ref.id, status: current.status },
    });
  }
  const sent = await Promise.allSettled([deps.bus.publishCancel(cancelEvent(ref)), deps.bus.publishCompletion(completionEvent(ref, 'Cancelled'))]);
  return { announced: sent.every((result) => result.status === 'fulfilled') };
}
