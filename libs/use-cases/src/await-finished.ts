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
 * Waits until the invocation finishes or `waitMs` passes, then returns its state as the store holds it
 * (as the completion event of the executor that recorded it says, when it says): finished, or where it
 * stands when the time ran out; null when it is gone (expired). The wait is registered (and the
 * bus routes the invocation's completion event here) before `registered` runs and before the store is
 * read again, so a completion event cannot slip between the two. The state alone is read: no answer needs the entity or the logs. Used by sync webhook calls and
 * long polls alike.
 */
export async function awaitFinished(deps: AwaitDeps, ref: InvocationRef, options: AwaitOptions): Promise<InvocationState | null> {
  // The direct reply can no longer come: wait like any other waiter, and end at once if it finished meanwhile.
  const onPromoted = options.directReply
    ? () =>
        void watched(deps, ref).then(
          (state) => state && isTerminal(state.status) && waiting.cancel(),
          // The store out of reach: the wait ends at its deadline, with a read of the store.
          () => undefined,
        )
    : undefined;
  const waiting = deps.waiter.wait(ref.id, options.waitMs, { runsHere: options.fresh, directReply: options.directReply, onPromoted });
  options.hangUp?.(waiting.cancel);
  try {
    await waiting.routed;
    await options.registered?.();
    if (!options.fresh) {
      const current = await watched(deps, ref);
      if (current && isTerminal(current.status)) return current;
    }
    // The event of the executor that recorded the outcome says what it recorded: no read needed.
    const event = await waiting.promise;
    const announced = event && finishedStateOf(event);
    if (announced) return announced;
  } finally {
    waiting.cancel();
  }
  return deps.invocations.getState(ref);
}

/**
 * The invocation's state, read by a waiter the bus routes its completion event to. A sync call's executor
 * replies to the call's gateway and publishes the event only when the store says others wait, so this
 * waiter says it does first (unless the invocation finished): the store orders that mark with the
 * completion, so either the event is published or the state returned is finished.
 */
async function watched(deps: AwaitDeps, ref: InvocationRef): Promise<InvocationState | null> {
  const current = await deps.invocations.getState(ref);
  if (current?.mode !== 'sync' || isTerminal(current.status)) return current;
  return deps.invocations.watch(ref);
}
