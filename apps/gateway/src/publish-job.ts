import { jobMessage } from '@gi/contracts';
import type { NewInvocation } from '@gi/domain';
import { LogThrottle } from '@gi/observability';
import type { GatewayDeps } from './gateway.deps';

/** A broker out of reach fails every publish: one line per window, with the count held back, not one per call. */
const publishFailures = new LogThrottle(10_000);

/**
 * Step 4 of a webhook call: publishes the job of a stored invocation. A failure does not fail the call:
 * the invocation is stored, so the caller is told it was accepted, and the job is kept to be published
 * again as soon as the broker connection is back (UnpublishedJobs); the sweepers remain the backstop.
 */
export async function publishJob(deps: Pick<GatewayDeps, 'bus' | 'logger' | 'unpublished'>, invocation: Pick<NewInvocation, 'botId' | 'id' | 'pool' | 'mode'>): Promise<void> {
  const job = jobMessage(invocation);
  try {
    // A sync caller waits for this job: the executor answers this gateway directly, not only by broadcast.
    await deps.bus.publish(job, { awaitReply: invocation.mode === 'sync' });
  } catch (error) {
    deps.unpublished?.add(job);
    const admitted = publishFailures.admit('publish');
    if (admitted.write) deps.logger.warn({ err: error, invocationId: invocation.id, suppressed: admitted.suppressed }, 'publish failed; the job is published again once the broker is back');
  }
}
