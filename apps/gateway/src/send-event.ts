import { jobMessage } from '@gi/contracts';
import { GiError, isTerminal, isValidEventName, JournalLimitExceeded, notFound, payloadTooLarge, badRequest, unavailable } from '@gi/domain';
import type { InvocationRef } from '@gi/domain';
import type { GatewayDeps } from './gateway.deps';

/** What the sender of an event is told: the run resumes with it now, or it is kept for the run's next wait of that name. */
export interface EventReceipt {
  invocationId: string;
  name: string;
  status: 'resumed' | 'kept';
}

/**
 * POST .../GenericIntegrationEvent: an outside system's event for a durable run (`Context.WaitForEvent`).
 * It completes the run's wait of that name, and a run suspended in it is queued again at once; with no
 * such wait yet it is kept for the next one, never lost (JournalStore.sendEvent). `payloadJson` is the
 * body as JSON text, checked where it was read.
 */
export async function sendEvent(deps: Pick<GatewayDeps, 'store' | 'bus' | 'clock' | 'logger' | 'settings'>, ref: InvocationRef, name: string, payloadJson: string): Promise<EventReceipt> {
  if (!isValidEventName(name)) throw badRequest('The query parameter name must be the event name the run waits for: 1 to 200 characters, no control characters.');
  let delivery;
  try {
    delivery = await deps.store.journal.sendEvent(ref, { name, payloadJson, at: deps.clock.now() }, deps.settings.journalLimits);
  } catch (error) {
    if (error instanceof JournalLimitExceeded) throw payloadTooLarge(`The event was not kept: ${error.message}`);
    if (error instanceof GiError) throw error;
    throw unavailable('The event could not be stored; nothing was kept. Try again.');
  }
  if (!delivery) {
    const state = await deps.store.invocations.getState(ref);
    if (state && isTerminal(state.status)) {
      throw new GiError('already_finished', 'Invocation already finished', `The invocation has already finished (${state.status}); the event was not kept.`, { extensions: { invocationId: ref.id } });
    }
    throw notFound(`No invocation '${ref.id.slice(0, 80)}' exists for this bot (unknown or expired).`);
  }
  if (delivery.delivered === 'resumed') {
    // Stored as published now: if this publish is lost, the republish sweep sends it again.
    await deps.bus.publish(jobMessage({ ...ref, pool: delivery.pool })).catch((err) => deps.logger.warn({ err, invocationId: ref.id }, 'publish of a resumed run failed; left for the sweeper'));
  }
  return { invocationId: ref.id, name, status: delivery.delivered === 'kept' ? 'kept' : 'resumed' };
}
