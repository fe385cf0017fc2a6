import { isTerminal, pollLocation } from '@gi/domain';
import type { InvocationState } from '@gi/domain';
import { awaitFinished, syncCallWait } from '@gi/use-cases';
import { acceptCall } from './accept-call';
import type { AcceptedCall } from './accept-call';
import type { GatewayDeps } from './gateway.deps';
import { persistInvocation } from './persist-invocation';
import type { StoredCall } from './persist-invocation';
import type { Admission } from './quota-gate';
import { publishJob } from './publish-job';
import type { WebhookCall } from './webhook-call';

/** How the caller learns of its call while it is handled. */
export interface CallHooks {
  /** The invocation exists (stored, or the original of a repeated Idempotency-Key): every reply from now on names it. */
  stored: (invocationId: string) => void;
  /** Hands over what ends a sync wait early: the caller hung up. */
  hangUp: (stop: () => void) => void;
}

/** What the call is answered; rendering it is the router's part. */
export type WebhookAnswer = { invocationId: string; location: string; preferenceApplied?: string } & (
  /** 200 with the rendered ResponseBody, or the problem of its recorded error. */
  | { kind: 'finished'; invocation: InvocationState }
  /** 202 with the invocationId: an async start, or a hybrid wait that ran out. */
  | { kind: 'accepted' }
  /** 409: an async repeat of an Idempotency-Key whose invocation has not finished. */
  | { kind: 'in-use' }
  /** 504: the sync wait ran out; the job goes on and can be polled. */
  | { kind: 'timed-out'; waitSeconds: number }
);

/**
 * One webhook call, top to bottom: (1) admit it within the bot's and token's quotas, (2) accept it
 * (validate, read the body, build the invocation), (3) persist the invocation, (4) publish its job,
 * (5) wait for its outcome (sync) or answer at once (async). Async: 202 with the invocationId and its
 * poll URL. Sync: the outcome once the job finishes, held at most the sync limit or the caller's
 * `Prefer: wait=N`; then 202 when the caller also prefers respond-async, else 504. A repeat (same
 * Idempotency-Key, same request) never runs anything: it answers the original's outcome when there is
 * one; otherwise a sync repeat waits for it like the first caller and an async one gets 409.
 */
export async function handleWebhookCall(deps: GatewayDeps, call: WebhookCall, hooks: CallHooks): Promise<WebhookAnswer> {
  const admission = await deps.quotas?.admit(call.botId, call.tokenId);
  let accepted: AcceptedCall | undefined;
  let stored;
  try {
    // Whatever can be refused on the headers alone is refused before the body is read.
    const readBody = call.prepareBody();
    accepted = await acceptCall(deps, call, readBody);
    stored = await persistInvocation(deps, accepted);
  } catch (error) {
    // Nothing was stored: the call does not count as in flight, nor as waiting.
    admission?.release();
    accepted?.endWait?.();
    throw error;
  }
  try {
    return await answerStored(deps, call, hooks, stored, admission);
  } finally {
    accepted.endWait?.();
  }
}

/** Steps 4 and 5 for a call whose invocation is stored (or the original of its Idempotency-Key found). */
async function answerStored(deps: GatewayDeps, call: WebhookCall, hooks: CallHooks, stored: StoredCall, admission: Admission | undefined): Promise<WebhookAnswer> {
  // A repeat of an Idempotency-Key stores nothing new either.
  if (stored.kind === 'new') admission?.stored();
  else admission?.release();
  const { invocation, mode } = stored;
  hooks.stored(invocation.id);
  // Each answer names its fields: an object spread followed by more fields is promoted wholesale by V8 (docs/decisions.md).
  const invocationId = invocation.id;
  const location = pollLocation(deps.settings.platformSegment, invocation.botId, invocation.id);

  if (mode === 'async') {
    if (stored.kind === 'new') {
      await publishJob(deps, invocation, admission?.backlog);
      return { kind: 'accepted', invocationId, location, preferenceApplied: call.prefer.respondAsync ? 'respond-async' : undefined };
    }
    if (isTerminal(stored.invocation.status)) return { kind: 'finished', invocationId, location, invocation: stored.invocation };
    return { kind: 'in-use', invocationId, location };
  }

  const waitMs = Math.min(deps.settings.syncTimeoutMs, (call.prefer.waitSeconds ?? Number.POSITIVE_INFINITY) * 1000);
  const waitApplied = call.prefer.waitSeconds === undefined ? undefined : `wait=${waitMs / 1000}`;
  // How the wait hears the outcome (a new job's direct reply, a repeat's partition) is completion
  // routing's. A caller hanging up only ends its own wait: the job goes on and its outcome stays pollable.
  const state =
    stored.kind === 'repeat' && isTerminal(stored.invocation.status)
      ? stored.invocation
      : await awaitFinished({ waiter: deps.waiter, invocations: deps.store.invocations }, invocation, {
          waitMs,
          hangUp: hooks.hangUp,
          ...syncCallWait(stored.kind, () => publishJob(deps, invocation, admission?.backlog)),
        });
  if (state && isTerminal(state.status)) return { kind: 'finished', invocationId, location, invocation: state, preferenceApplied: waitApplied };
  if (call.prefer.respondAsync) return { kind: 'accepted', invocationId, location, preferenceApplied: `respond-async, ${waitApplied}` };
  return { kind: 'timed-out', invocationId, location, waitSeconds: waitMs / 1000, preferenceApplied: waitApplied };
}
