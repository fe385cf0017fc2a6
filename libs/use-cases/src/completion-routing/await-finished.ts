import { finishedStateOf } from '@gi/contracts';
import type { CompletionEvent } from '@gi/contracts';
import { isTerminal } from '@gi/domain';
import type { CompletionWaiter, InvocationRef, InvocationState, InvocationStore } from '@gi/domain';

export interface AwaitDeps {
  /** Fed with the bus's completion events. */
  waiter: CompletionWaiter<CompletionEvent>;
  invocations: Pick<InvocationStore, 'getState' | 'watch'>;
}

export interface AwaitOptions {
  waitMs: number;
  /** Runs once the wait is registered, before the store is read again: publishing the job, say. */
  registered?: () => Promise<void>;
  /** Ending the wait early: the caller hung up. */
  hangUp?: (cancel: () => void) => void;
  /** Skips the read once registered: the invocation was just stored, nothing can have finished it. */
  fresh?: boolean;
  /** `registered` publishes the job asking for a direct reply to this process: the event comes that way. */
  directReply?: boolean;
}

/**
 * How a sync call waits (completion-routing.ts, *Waiter*): its new job is published once the wait is
 * registered, asking for a direct reply (a standby watch; nothing to read, it was just stored); a
 * repeat of its Idempotency-Key waits like a poll, by partition and marked watched.
 */
export function syncCallWait(stored: 'new' | 'repeat', publish: () => Promise<void>): Pick<AwaitOptions, 'fresh' | 'directReply' | 'registered'> {
  return stored === 'new' ? { fresh: true, directReply: true, registered: publish } : {};
}

/**
 * Waits until the invocation finishes or `waitMs` passes, then returns its state as the store holds it
 * (as the completion event of the executor that recorded it says, when it says): finished, or where it
 * stands when the time ran out; null when it is gone (expired). The state alone is read: no answer
 * needs the entity or the logs. Used by sync webhook calls and long polls alike. The order of its steps
 * is the waiter's part of completion routing (completion-routing.ts).
 */
export async function awaitFinished(deps: AwaitDeps, ref: InvocationRef, options: AwaitOptions): Promise<InvocationState | null> {
  // A standby watch whose direct reply can no longer come is bound by the bus, which then says so here:
  // mark the invocation watched, and end at once if the mark finds it finished meanwhile.
  const onPromoted = options.directReply
    ? () =>
        void readWatched(deps, ref).then(
          (state) => state && isTerminal(state.status) && waiting.cancel(),
          // The store out of reach: the wait ends at its deadline, with a read of the store.
          () => undefined,
        )
    : undefined;
  // 1. Register the wait: its listener now, its route (a standby watch, or a bound partition) next.
  const waiting = deps.waiter.wait(ref.id, options.waitMs, { runsHere: options.fresh, directReply: options.directReply, onPromoted });
  options.hangUp?.(waiting.cancel);
  try {
    await waiting.routed;
    // 2. Publish the job, once the event has somewhere to come.
    await options.registered?.();
    // 3. Read the state, marked watched: after the route, so either it is finished or its event comes here.
    if (!options.fresh) {
      const current = await readWatched(deps, ref);
      if (current && isTerminal(current.status)) return current;
    }
    // 4. The event of the executor that recorded the outcome says what it recorded: no read needed.
    const event = await waiting.promise;
    const announced = event && finishedStateOf(event);
    if (announced) return announced;
  } finally {
    waiting.cancel();
  }
  // 5. No event, or one without facts (a cancellation, a large outcome, a relayed one): one read.
  return deps.invocations.getState(ref);
}

/**
 * The invocation's state, read by a waiter the bus routes its completion event to. A sync call's executor
 * replies to the call's gateway and publishes the event only when the store says others wait, so this
 * waiter says it does first (unless the invocation finished), and takes the state the mark returns: the
 * store orders that mark with the completion, so either the event is published or that state is finished.
 */
async function readWatched(deps: AwaitDeps, ref: InvocationRef): Promise<InvocationState | null> {
  const current = await deps.invocations.getState(ref);
  if (current?.mode !== 'sync' || isTerminal(current.status)) return current;
  return deps.invocations.watch(ref);
}
