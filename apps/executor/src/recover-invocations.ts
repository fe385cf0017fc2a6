import type { Clock, JobBus, Store } from '@gi/domain';

/**
 * Republishes work that was accepted but not finished: running invocations whose lease ended before
 * `leaseBefore` go back to Queued, then every queued invocation created before `queuedBefore` is
 * published again. Claims are conditional, so a job published twice still runs once.
 */
export async function recoverInvocations(
  deps: { store: Store; bus: JobBus; clock: Clock },
  options: { leaseBefore: number; queuedBefore: number; batch?: number },
): Promise<{ requeued: number; republished: number }> {
  const requeued = await deps.store.invocations.requeueExpiredLeases(options.leaseBefore);
  const queued = await deps.store.invocations.listQueued(options.queuedBefore, options.batch ?? 10_000);
  for (const ref of queued) {
    await deps.bus.publish({ kind: 'job', version: 1, botId: ref.botId, invocationId: ref.id, pool: ref.pool });
  }
  return { requeued: requeued.length, republished: queued.length };
}
