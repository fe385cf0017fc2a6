import type { JobDecision, JobDelivery, JobMessage, Subscription } from '@gi/contracts';
import { giveUp } from './announce-outcome';
import { IntegrationVersions } from './integration-versions';
import { runInvocation } from './run-invocation';
import type { ExecutorDeps } from './executor-deps';
import { RunningInvocations } from './running-invocations';

export interface Executor {
  /**
   * Stops taking jobs and lets the runs in hand finish for at most `drainDeadlineMs` (none: as long as
   * they take); then hands back those still going (stopped, their leases released, their jobs requeued),
   * and resolves once every handler has settled.
   */
  stop(drainDeadlineMs?: number): Promise<void>;
}

/**
 * Consumes the given pools and runs their jobs: `concurrency` at once, at most `perBot` of one bot's
 * (the rest of them wait their turn, taken in turns between bots). A job whose handling fails is requeued (the store may be
 * briefly unavailable); on its last delivery it is a poison job: its invocation is recorded as Failed
 * and the message dead-lettered, so it never loops. A cancellation heard on the bus stops the run of
 * that invocation if it runs here.
 */
export async function startExecutor(settings: Omit<ExecutorDeps, 'versions'>, pools: string[], concurrency: number, perBot = concurrency): Promise<Executor> {
  const deps: ExecutorDeps = { ...settings, versions: new IntegrationVersions(settings.store.catalog) };
  const running = new RunningInvocations();
  const cancellations = await deps.bus.onCancel((event) => {
    if (running.cancel({ botId: event.botId, id: event.invocationId })) deps.logger.info({ invocationId: event.invocationId, botId: event.botId }, 'cancellation received; stopping the run');
    // A cancelled invocation's callback is due now.
    deps.callbacks?.kick();
  });
  const handle = async (job: JobMessage, delivery?: JobDelivery): Promise<JobDecision> => {
    try {
      return await runInvocation(deps, job, delivery, running);
    } catch (err) {
      const deliveries = delivery?.deliveryCount ?? 1;
      if (deliveries < deps.maxAttempts) {
        deps.logger.error({ err, invocationId: job.invocationId, botId: job.botId, pool: job.pool, deliveries }, 'job handling failed; requeued');
        return 'requeue';
      }
      deps.logger.error({ err, invocationId: job.invocationId, botId: job.botId, pool: job.pool, deliveries }, 'poison job: recorded as Failed and dead-lettered');
      deps.metrics.deadLetters.inc({ reason: 'poison' });
      const detail = `The job could not be handled in ${deliveries} deliveries (${err instanceof Error ? err.message.slice(0, 200) : 'unknown error'}); it was dead-lettered.`;
      await giveUp(deps, { botId: job.botId, id: job.invocationId }, detail, delivery).catch((error) => deps.logger.warn({ err: error, invocationId: job.invocationId }, 'giving up could not be recorded or announced'));
      return 'dead-letter';
    }
  };
  const subscriptions: Subscription[] = [];
  for (const pool of pools) subscriptions.push(await deps.bus.consume(pool, concurrency, handle, { perBot }));
  return {
    async stop(drainDeadlineMs = Number.POSITIVE_INFINITY) {
      const drained = Promise.all(subscriptions.map((s) => s.close()));
      if (!(await settlesWithin(drained, drainDeadlineMs))) {
        const runs = running.handBackAll();
        deps.logger.warn({ runs, drainDeadlineSeconds: drainDeadlineMs / 1000 }, 'drain deadline passed; handing back the runs still going');
        await drained;
      }
      await cancellations.close();
    },
  };
}

/** True when `work` settles within `ms` (an infinite `ms`: whenever it does). */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  if (!Number.isFinite(ms)) return work.then(() => true, () => true);
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = work.then(() => true as const, () => true as const);
  try {
    return await Promise.race([settled, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
