import { jobMessage } from '@gi/contracts';
import type { NewInvocation } from '@gi/domain';
import type { GatewayDeps } from './gateway.deps';

/**
 * Step 4 of a webhook call: publishes the job of a stored invocation. A failure is only logged: the
 * invocation is stored, the sweeper publishes it again, so the caller is told it was accepted.
 */
export async function publishJob(deps: Pick<GatewayDeps, 'bus' | 'logger'>, invocation: Pick<NewInvocation, 'botId' | 'id' | 'pool' | 'mode'>): Promise<void> {
  try {
    // A sync caller waits for this job: the executor answers this gateway directly, not only by broadcast.
    await deps.bus.publish(jobMessage(invocation), { awaitReply: invocation.mode === 'sync' });
  } catch (error) {
    deps.logger.warn({ err: error, invocationId: invocation.id }, 'publish failed; left for the sweeper');
  }
}
