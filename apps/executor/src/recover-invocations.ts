import { jobMessage } from '@gi/contracts';
import type { JobBus } from '@gi/contracts';
import type { Clock, InvocationRef, Store } from '@gi/domain';

/**
 * Republishes work that was accepted but not finished: running invocations whose lease ended before
 * `leaseBefore` go back to Queued, then every queued invocation last published before `publishedBefore`
 * is published again (the gateway died between its store write and its publish, or the job was lost).
 * Claims are conditional, so a job published twice still runs once.
 */
export async function recoverInvocations(
  deps: { store: Store; bus: Pick<JobBus, 'publish'>; clock: Clock },
  options: { leaseBefore: number; publishedBefore: number; batch?: number },
): Promise<{ requeued: number; republished: number }> {
  const requeued = await deps.store.invocations.requeueExpiredLeases(options.leaseBefore);
  const queued = await deps.store.invocations.takeUnpublished(options.publishedBefore, deps.clock.now(), options.batch ?? 10_000);
  await publishQueued(deps, queued);
  return { requeued: requeued.length, republished: queued.length };
}

/**
 * Takes over the work of a lease owner known to be dead (an embedded process that ended): its running
 * invocations go back to the queue and are published at once, without waiting for their leases to end.
 */
export async function takeOverFrom(deps: { store: Store; bus: Pick<JobBus, 'publish'>; clock: Clock }, owner: string): Promise<{ released: number; republished: number }> {
  const released = await deps.store.invocations.releaseLeasesOf(owner);
  if (released.length === 0) return { released: 0, republished: 0 };
  // Released as never published: they are taken here (conditionally, like a sweep's), with any other such.
  const queued = await deps.store.invocations.takeUnpublished(1, deps.clock.now(), 10_000);
  await publishQueued(deps, queued);
  return { released: released.length, republished: queued.length };
}

/**
 * Publishes the jobs of queued invocations, each with its bot's count in flight as its backlog (read
 * once per bot), so a bot's many republished jobs go where its flood would have gone (PublishOptions).
 */
export async function publishQueued(deps: { store: Store; bus: Pick<JobBus, 'publish'>; clock: Clock }, queued: Array<InvocationRef & { pool: string }>): Promise<void> {
  const backlogs = new Map<string, number>();
  for (const ref of queued) {
    let backlog = backlogs.get(ref.botId);
    if (backlog === undefined) backlogs.set(ref.botId, (backlog = (await deps.store.invocations.countActive(ref.botId, deps.clock.now())).total));
    await deps.bus.publish(jobMessage(ref), { backlog });
  }
}
