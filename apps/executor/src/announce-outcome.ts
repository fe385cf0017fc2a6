import { completionEvent } from '@gi/contracts';
import type { FinishedFacts, JobDelivery } from '@gi/contracts';
import type { Invocation, InvocationRef, Outcome } from '@gi/domain';
import { announceCompletion } from '@gi/use-cases';
import type { ExecutorDeps } from './executor-deps';

/**
 * What was recorded for a finished invocation, for its completion event: whoever waits for it answers
 * from the event instead of reading the store again.
 */
export const finishedFacts = (
  invocation: Pick<Invocation, 'integrationId' | 'attempt' | 'startedAt' | 'responseContentType'>,
  outcome: Outcome,
  finishedAt: number,
): FinishedFacts => ({
  integrationId: invocation.integrationId,
  attempt: invocation.attempt,
  startedAt: invocation.startedAt,
  finishedAt,
  responseContentType: invocation.responseContentType,
  outcome,
});

/**
 * Gives up on an invocation that will not be run again: records it as Failed ("Gave up", with `detail`),
 * whatever its lease, then tells its callback dispatcher and announces it like any outcome. Both ways
 * of giving up come here: an invocation started `maxAttempts` times, and a job whose handling failed on
 * its last delivery. Resolves false when it was already finished (nothing is announced).
 */
export async function giveUp(deps: Pick<ExecutorDeps, 'bus' | 'logger' | 'store' | 'clock' | 'callbacks'>, ref: InvocationRef, detail: string, delivery?: JobDelivery): Promise<boolean> {
  const recorded = await deps.store.invocations.giveUp(ref, { code: 'connector_failed', title: 'Gave up', detail }, deps.clock.now());
  if (!recorded) return false;
  deps.callbacks?.kick();
  await announceCompletion(deps, completionEvent(ref, 'Failed'), delivery);
  return true;
}
