import type { InvocationRef, InvocationState } from '@gi/domain';

/** Finished states held at most; a sync caller takes its own within a turn or two of the completion. */
export const RECENTLY_FINISHED_COUNT = 256;
/** A state whose recorded outcome is larger than this (JSON characters) is never held: it is read back instead. */
export const RECENTLY_FINISHED_MAX_OUTCOME = 32 * 1024;

/**
 * The states of the sync invocations this store completed lately, as the completion's own write
 * returned them, with when they expire. In an embedded deployment the caller waiting for a sync call
 * reads its state just after the executor completed it through the same store: it then takes it from
 * here instead of reading the row again. A finished invocation's state never changes (only its expiry
 * removes it), so what is held stays true. A read takes its entry out; the oldest go first past the limit.
 */
export class RecentlyFinished {
  private readonly entries = new Map<string, { state: InvocationState; expireAt: number }>();

  constructor(private readonly count = RECENTLY_FINISHED_COUNT) {}

  remember(state: InvocationState, expireAt: number): void {
    this.entries.delete(state.id);
    this.entries.set(state.id, { state, expireAt });
    if (this.entries.size > this.count) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** The state, once, unless it expired by `now`: its entry is gone afterwards. Undefined when none is held. */
  take(ref: InvocationRef, now: number): InvocationState | undefined {
    const entry = this.entries.get(ref.id);
    if (!entry || entry.state.botId !== ref.botId) return undefined;
    this.entries.delete(ref.id);
    return entry.expireAt > now ? entry.state : undefined;
  }
}
