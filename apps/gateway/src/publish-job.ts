import { jobMessage } from '@gi/contracts';
import type { NewInvocation } from '@gi/domain';
import type { GatewayDeps } from './gateway.deps';

/**
 * Step 4 of a webhook call: publishes the job of a stored invocation, with the bot's other invocations
 * in flight when it was admitted (`backlog`, if the quota gate counted them). A failure is only logged: the
 * invocation is stored, the sweeper publishes it again, so the caller is told it was accepted.
 */
export async function publishJob(deps: Pick<GatewayDeps, 'bus' | 'logger'>, invocation: Pick<NewInvocation, 'botId' | 'id' | 'pool' | 'mode'>, backlog?: number): Promise<void> {
  try {
    // A sync caller waits for this job: the executor answers this gateway directly, not only by broadcast.
    // The bot's backlog keeps a flood of its jobs apart from other bots' first ones (PublishOptions).
    await deps.bus.publish(jobMessage(invocation), { awaitReply: invocation.mode === 'sync', backlog });
  } catch (error) {
    deps.logger.warn({ err: error, invocationId: invocation.id }, 'publish failed; left for the sweeper');
  }
}
