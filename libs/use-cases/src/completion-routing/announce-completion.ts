import { completionEvent } from '@gi/contracts';
import type { CompletionEvent, JobBus, JobDecision, JobDelivery } from '@gi/contracts';
import type { InvocationRef } from '@gi/domain';

export interface AnnounceDeps {
  bus: Pick<JobBus, 'reply' | 'publishCompletion'>;
  logger: { warn(fields: object, message: string): void };
}

/**
 * Announces a finished invocation (completion-routing.ts, *Announcer*): straight back to a sync call's
 * waiting gateway when its job carries a reply address, and by partition to the processes watching it
 * (long polls; the broker drops the event when none does). A sync call's event is published only when
 * `watched` (the store's Completion.watched: a repeat of the call, a poll, or the gateway itself once its
 * reply could not come): usually its gateway alone waits, and the event would route nowhere. An outcome
 * announced again (a redelivered job, a give-up) does not know, and counts as watched.
 */
export async function announceCompletion(deps: AnnounceDeps, event: CompletionEvent, delivery?: JobDelivery, watched = true): Promise<void> {
  // No reply address: an async call, or a sync call's job published again without it (its wait was promoted).
  if (!delivery?.replyTo) return deps.bus.publishCompletion(event);
  // The reply alone: when it cannot be sent the job is requeued, and its redelivery announces it to all.
  if (!watched) return deps.bus.reply(delivery.replyTo, event);
  // Both: a lost reply then costs the gateway one store read at the end of its wait.
  await Promise.all([replyLogged(deps, delivery.replyTo, event), deps.bus.publishCompletion(event)]);
}

/** Announces a recorded outcome; when that fails the job is requeued, and its redelivery announces it again. */
export async function announceRecorded(
  deps: AnnounceDeps,
  event: CompletionEvent,
  log: { warn(fields: object, message: string): void },
  delivery?: JobDelivery,
  watched = true,
): Promise<JobDecision> {
  try {
    await announceCompletion(deps, event, delivery, watched);
    return 'ack';
  } catch (err) {
    log.warn({ err, status: event.status }, 'outcome recorded, but its announcement failed; the job is requeued to announce it again');
    return 'requeue';
  }
}

/**
 * A sync call's run stopped by a cancellation: its gateway is told `Cancelled` directly. The canceller
 * published its own event by partition, which a standby watch does not hear.
 */
export const replyCancelled = (deps: AnnounceDeps, ref: InvocationRef, delivery?: JobDelivery): Promise<void> =>
  replyDirectly(deps, completionEvent(ref, 'Cancelled'), delivery);

/**
 * A sync call's durable run suspended: its gateway is told `Waiting` directly (no outcome), and the bus
 * routes its wait by partition from then on, since the attempt that finishes the run may be anywhere.
 */
export const replySuspended = (deps: AnnounceDeps, ref: InvocationRef, delivery?: JobDelivery): Promise<void> =>
  replyDirectly(deps, completionEvent(ref, 'Waiting'), delivery);

/** Tells a sync caller's gateway alone, if the job has one; a reply that cannot be sent is logged. */
async function replyDirectly(deps: AnnounceDeps, event: CompletionEvent, delivery?: JobDelivery): Promise<void> {
  if (delivery?.replyTo) await replyLogged(deps, delivery.replyTo, event);
}

const replyLogged = (deps: AnnounceDeps, replyTo: string, event: CompletionEvent): Promise<void> =>
  deps.bus.reply(replyTo, event).catch((err) => deps.logger.warn({ err, invocationId: event.invocationId }, 'direct reply not sent'));
