import type { Context } from 'koa';
import { finalReply, idempotencyKeyInUse, isTerminal } from '@gi/domain';
import type { InvocationState } from '@gi/domain';
import { pollLocation, publishInvocation, syncTimedOut } from './accept-invocation';
import type { Accepted } from './accept-invocation';
import type { GatewayDeps } from './gateway.deps';
import type { Preferences } from './prefer';

/**
 * Answers an accepted call. Async (`asyncResponse=true` or `Prefer: respond-async`): 202 with the
 * invocationId and its poll URL. Sync: the outcome once the job finishes, held at most the sync limit
 * or the caller's `Prefer: wait=N`; then 202 when the caller also prefers respond-async, else 504.
 * A repeat (same Idempotency-Key, same request) never runs anything: it answers the original's
 * outcome when there is one; otherwise a sync repeat waits for it like the first caller and an async
 * one gets 409.
 */
export async function answerCall(ctx: Context, deps: GatewayDeps, accepted: Accepted, prefer: Preferences): Promise<void> {
  const { invocation } = accepted;
  const location = pollLocation(deps.settings.platformSegment, invocation.botId, invocation.id);
  ctx.set('X-Invocation-Id', invocation.id);

  if (accepted.mode === 'async') {
    if (accepted.kind === 'new') {
      await publishInvocation(deps, invocation);
      return acceptedReply(ctx, invocation.id, location, prefer.respondAsync ? 'respond-async' : undefined);
    }
    if (isTerminal(accepted.invocation.status)) return outcomeReply(ctx, accepted.invocation);
    throw idempotencyKeyInUse(invocation.id, location);
  }

  const waitMs = Math.min(deps.settings.syncTimeoutMs, (prefer.waitSeconds ?? Number.POSITIVE_INFINITY) * 1000);
  const waitApplied = prefer.waitSeconds === undefined ? undefined : `wait=${waitMs / 1000}`;
  if (waitApplied) ctx.set('Preference-Applied', waitApplied);
  const finished = await waitForOutcome(ctx, deps, accepted, waitMs);
  if (finished) return outcomeReply(ctx, finished);
  if (prefer.respondAsync) return acceptedReply(ctx, invocation.id, location, `respond-async, ${waitApplied}`);
  throw syncTimedOut(invocation.id, location, waitMs / 1000);
}

/**
 * Holds a sync call until its invocation finishes or `waitMs` passes; null when it has not finished.
 * The wait is registered before publishing (or re-reading the store), so the completion event cannot
 * be missed. A caller hanging up only ends its own wait: the job goes on and its outcome stays pollable.
 * The store is read for the state alone: the reply needs neither the entity nor the logs.
 */
async function waitForOutcome(ctx: Context, deps: GatewayDeps, accepted: Accepted, waitMs: number): Promise<InvocationState | null> {
  const { invocation } = accepted;
  if (accepted.kind === 'repeat' && isTerminal(accepted.invocation.status)) return accepted.invocation;
  const waiting = deps.waiter.wait(invocation.id, waitMs);
  ctx.res.once('close', waiting.cancel);
  if (accepted.kind === 'new') {
    await publishInvocation(deps, invocation);
  } else {
    const current = await deps.store.invocations.getState(invocation);
    if (current && isTerminal(current.status)) {
      waiting.cancel();
      return current;
    }
  }
  await waiting.promise;
  const finished = await deps.store.invocations.getState(invocation);
  return finished && isTerminal(finished.status) ? finished : null;
}

/** The reply of an async start: the same for `asyncResponse=true`, `Prefer: respond-async` and a hybrid wait that ran out. */
function acceptedReply(ctx: Context, invocationId: string, location: string, preferenceApplied: string | undefined): void {
  ctx.status = 202;
  ctx.set('Location', location);
  if (preferenceApplied) ctx.set('Preference-Applied', preferenceApplied);
  ctx.body = { invocationId, status: 'Running' };
}

/** The finished invocation's reply, the same as every poll gets: the rendered ResponseBody or its error. */
function outcomeReply(ctx: Context, invocation: InvocationState): void {
  const reply = finalReply(invocation);
  ctx.status = 200;
  ctx.type = reply.contentType;
  ctx.body = reply.payload;
}
