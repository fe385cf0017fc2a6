import { AsyncLocalStorage } from 'node:async_hooks';
import type { Clock, InvocationError, InvocationRef, Store } from '@gi/domain';

/**
 * Which invocations this process is handling (claimed, and not yet recorded and announced), so a
 * fatal error can be laid at the door of the one whose handling threw it.
 *
 * Carrying the invocation through every callback and promise its handling makes (AsyncLocalStorage)
 * would tell that at once, but on Node 20 it makes every promise of the process costlier: about a
 * quarter of the embedded service's throughput. So it is done only for re-runs (attempt > 1: the
 * invocation was cut short before, by a crash or a kill), which are rare, and only while one is in
 * hand. A first run is blamed only when it was the one invocation in hand. A crash-looping invocation
 * is thus quarantined by its first crash when it ran alone, else by its second (docs/decisions.md).
 */
const reRuns = new AsyncLocalStorage<InvocationRef>();
let reRunsInHand = 0;
const inHand = new Map<string, { ref: InvocationRef; tracked: boolean }>();

/** Runs `handle`, the handling of the claimed invocation `ref`, as in hand. */
export async function handling<T>(ref: InvocationRef, attempt: number, handle: () => Promise<T>): Promise<T> {
  const key = `${ref.botId}/${ref.id}`;
  const tracked = attempt > 1;
  inHand.set(key, { ref, tracked });
  try {
    if (!tracked) return await handle();
    reRunsInHand++;
    try {
      return await reRuns.run(ref, handle);
    } finally {
      // The cost goes with the last re-run.
      if (--reRunsInHand === 0) reRuns.disable();
    }
  } finally {
    inHand.delete(key);
  }
}

/**
 * The invocation a fatal error being handled now is laid to: the re-run in whose callbacks it was
 * thrown, else the one first run in hand when no other invocation was. Undefined when it cannot be told.
 */
export function culprit(): InvocationRef | undefined {
  const tracked = reRuns.getStore();
  if (tracked) return tracked;
  if (inHand.size !== 1) return undefined;
  const [only] = inHand.values();
  // A re-run's own errors are told by its context: this one was not its.
  return only.tracked ? undefined : only.ref;
}

/** What a quarantined invocation answers: its run crashed the executor, so it is never run again. */
export const QUARANTINED: InvocationError = {
  code: 'connector_failed',
  title: 'Quarantined',
  detail: 'Its run crashed the executor, so it is not run again.',
};

/**
 * For a process about to end on a fatal error: records the invocation the error is laid to (see
 * `culprit`) as Failed, quarantined, so a restart does not run it (and crash) again. Call it while
 * the error is being handled, in the context of the code that threw. Null when no invocation can be
 * blamed. Invocations cut short by an outside interruption (SIGKILL, out of memory, a deploy) never
 * come here: they run again.
 */
export function quarantineInHand(deps: { store: Store; clock: Clock }): { ref: InvocationRef; recorded: Promise<boolean> } | null {
  const ref = culprit();
  if (!ref) return null;
  const recorded = deps.store.invocations.quarantine(ref, QUARANTINED, deps.clock.now()).catch(() => false);
  return { ref, recorded };
}
