import { completionEvent } from '@gi/contracts';
import type { CompletionEvent, FinishedFacts, JobDecision, JobDelivery } from '@gi/contracts';
import type { Invocation, InvocationRef, Outcome } from '@gi/domain';
import type { ExecutorDeps } from './executor-deps';

type AnnounceDeps = Pick<ExecutorDeps, 'bus' | 'logger'>;

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
 * Announces a finished invocation: to the processes watching it (long polls; the broker drops the event
 * when none does) and, for a sync call, straight back to the waiting gateway. A sync call's event is
 * published only when `othersWait` (the store's Completion.watched: a repeat of the call, a poll, or the
 * gateway itself once its reply could not come): usually its gateway alone waits, and the event would
 * route nowhere. A lost direct reply costs that caller one store read at the end of its wait.
 */
export async function announce(deps: AnnounceDeps, event: CompletionEvent, delivery?: JobDelivery, othersWait = true): Promise<void> {
  // Most jobs have no sync caller to reply to: they publish alone, without a promise to join.
  if (!delivery?.replyTo) return deps.bus.publishCompletion(event);
  // The reply alone: when it cannot be sent the job is requeued, and its redelivery announces it to all.
  if (!othersWait) return deps.bus.reply(delivery.replyTo, event);
  await Promise.all([reply(deps, delivery.replyTo, event), deps.bus.publishCompletion(event)]);
}

/**
 * Tells a sync caller's gateway alone. Its wait is not routed by partition, so an event another process
 * published (a cancellation) does not reach it.
 */
export async function replyDirectly(deps: AnnounceDeps, event: CompletionEvent, delivery?: JobDelivery): Promise<void> {
  if (delivery?.replyTo) await reply(deps, delivery.replyTo, event);
}

const reply = (deps: AnnounceDeps, replyTo: string, event: CompletionEvent): Promise<void> =>
  deps.bus.reply(replyTo, event).catch((err) => deps.logger.warn({ err, invocationId: event.invocationId }, 'direct reply not sent'));

/** Announces a recorded outcome; when that fails the job is requeued, and its redelivery announces it again. */
export async function announceRecorded(
  deps: AnnounceDeps,
  event: CompletionEvent,
  log: { warn(fields: object, message: string): void },
  delivery?: JobDelivery,
  othersWait = true,
): Promise<JobDecision> {
  try {
    await announce(deps, event, delivery, othersWait);
    return 'ack';
  } catch (err) {
    log.warn({ err, status: event.status }, 'outcome recorded, but its announcement failed; the job is requeued to announce it again');
    return 'requeue';
  }
}

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
  await announce(deps, completionEvent(ref, 'Failed'), delivery);
  return true;
}
