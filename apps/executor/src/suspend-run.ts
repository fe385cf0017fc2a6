import { jobMessage } from '@gi/contracts';
import type { JobDecision, JobDelivery } from '@gi/contracts';
import type { ClaimedInvocation, WaitReason } from '@gi/domain';
import { replySuspended } from '@gi/use-cases';
import { keepWaitingUntil } from './durable-run';
import type { RunLog } from './run-log';
import type { ExecutorDeps } from './executor-deps';

/**
 * Suspends a durable run that stopped to wait (a long sleep, retry delay or event wait): the invocation
 * becomes Waiting, holding no executor, until the sweeper wakes it at `wait.until` or an event resumes it;
 * it then runs again from the top, its finished steps answered from the journal. The run's log lines
 * are stored first (the lease is given up with the suspension). A sync caller's gateway is told, so it
 * waits for the completion by partition from then on: the attempt that finishes it may run anywhere.
 */
export async function suspendRun(
  deps: ExecutorDeps,
  invocation: ClaimedInvocation,
  wait: WaitReason,
  activeMs: number,
  log: RunLog,
  delivery?: JobDelivery,
): Promise<JobDecision> {
  const ref = { botId: invocation.botId, id: invocation.id };
  const suspended = await deps.store.invocations.suspend(
    ref,
    { owner: deps.ownerId, attempt: invocation.attempt },
    { reason: wait, activeMs, keepUntil: keepWaitingUntil(invocation, deps.durable) },
    deps.clock.now(),
  );
  if (suspended === null) {
    log.warn('lease lost before the run could be suspended; whoever holds the invocation now goes on with it');
    return 'ack';
  }
  log.debug({ wait: wait.kind, step: wait.name, until: new Date(wait.until).toISOString() }, 'run suspended');
  await replySuspended(deps, ref, delivery);
  if (suspended === 'requeued') {
    // An event completed the wait while the run was stopping: it goes on at once.
    try {
      await deps.bus.publish(jobMessage({ ...ref, pool: invocation.pool }));
      return 'ack';
    } catch (err) {
      log.warn({ err }, 'the resumed job could not be published; this job is requeued instead');
      return 'requeue';
    }
  }
  return 'ack';
}
