import { jobMessage } from '@gi/contracts';
import type { JobBus } from '@gi/contracts';
import type { Clock, Store } from '@gi/domain';

/** How often every sweeper looks for waiting invocations whose time came: a sleep ends at most this late. */
export const WAKE_INTERVAL_MS = 1000;

/**
 * Wakes the waiting invocations whose time came (a durable run's sleep, retry delay or event timeout):
 * each becomes Queued, conditionally, so of concurrent sweepers one wakes it, and its job is published.
 * One whose publish fails stays Queued, as published now: the republish sweep sends it again.
 */
export async function wakeWaiting(deps: { store: Store; bus: Pick<JobBus, 'publish'>; clock: Clock }, limit = 1000): Promise<number> {
  const due = await deps.store.invocations.wakeDue(deps.clock.now(), limit);
  for (const ref of due) await deps.bus.publish(jobMessage(ref));
  return due.length;
}
