import type { Clock, JobBus, Store } from '@gi/domain';

/**
 * Republishes work that was accepted but not finished: running invocations whose lease ended before
 * `leaseBefore` go back to Queued, then every queued invocation last published before `publishedBefore`
 * is published again (the gateway died between its store write and its publish, or the job was lost).
 * Claims are conditional, so a job published twice still runs once.
 */
export async function recoverInvocations(
  deps: { store: Store; bus: JobBus; clock: Clock },
  options: { leaseBefore: number; publishedBefore: number; batch?: number },
): Promise<{ requeued: number; republished: number }> {
  const requeued = await deps.store.invocations.requeueExpiredLeases(options.leaseBefore);
  const queued = await deps.store.invocations.takeUnpublished(options.publishedBefore, deps.clock.now(), options.batch ?? 10_000);
  for (const ref of queued) {
    await deps.bus.publish({ kind: 'job', version: 1, botId: ref.botId, invocationId: ref.id, pool: ref.pool });
  }
  return { requeued: requeued.length, republished: queued.length };
}
