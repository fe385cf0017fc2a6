import type { JobDecision, Subscription } from '@gi/domain';
import { runInvocation } from './run-invocation';
import type { ExecutorDeps } from './run-invocation';

export interface Executor {
  stop(): Promise<void>;
}

/** Consumes the given pools and runs their jobs; a job whose handling fails is requeued. */
export async function startExecutor(deps: ExecutorDeps, pools: string[], concurrency: number): Promise<Executor> {
  const handle = async (job: Parameters<typeof runInvocation>[1]): Promise<JobDecision> => {
    try {
      return await runInvocation(deps, job);
    } catch (err) {
      deps.logger.error({ err, invocationId: job.invocationId }, 'job handling failed; requeued');
      return 'requeue';
    }
  };
  const subscriptions: Subscription[] = [];
  for (const pool of pools) subscriptions.push(await deps.bus.consume(pool, concurrency, handle));
  return {
    async stop() {
      await Promise.all(subscriptions.map((s) => s.close()));
    },
  };
}
