import { completionEvent } from '@gi/contracts';
import type { CompletionEvent } from '@gi/contracts';
import type { WaitOptions } from '@gi/domain';

/** Completions kept to answer a watch that arrives just after them (an IPC hop, or a late sync watch). */
export const RECENT_MS = 5_000;
/** A sync call's wait in the process that runs the job asks the others only once it lasted this long. */
export const LATE_WATCH_MS = 1_000;
/** The longest a wait can last: a sync call's (SYNC_TIMEOUT_SECONDS is at most an hour). */
const MAX_WATCH_MS = 3_600_000;
const MAX_ANNOUNCED = 100_000;

/**
 * How long a wait started in this process waits before it asks the other processes of an embedded
 * cluster for its completion, if it still waits then: a poll at once (the next turn, once its store read
 * is under way: a poll of a finished invocation ends then and asks no one); a sync call's wait in the
 * process that runs its job only after LATE_WATCH_MS, in case another process took its job over.
 */
export const watchDelayOf = ({ runsHere = false }: WaitOptions): number => (runsHere ? LATE_WATCH_MS : 0);

/**
 * The relay's rules (completion-routing.ts, *Relay*): which completions one process of an embedded
 * cluster sends to the others. Rather than every completion to every process, a completion goes when
 * another process watches its invocation, when a watch arrives within RECENT_MS after it (it finished
 * first), or when this process announced a watch for it itself (so the others forget that watch). A
 * wait is registered before the store is read, and a completion is announced after it is committed:
 * whichever comes first, the waiting process is told. The transport (IPC through the primary, one
 * message per turn) is the relay's (apps/services completion-relay.ts).
 */
export class RelayLedger {
  /** Invocations other processes wait for, with when their watch came. */
  private readonly watched = new Map<string, number>();
  /** This process's completions of the last RECENT_MS, oldest first. */
  private readonly recent = new Map<string, { event: CompletionEvent; at: number }>();
  /** Watches this process announced. */
  private readonly announced = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  /** This process announces a watch for `invocationId`. */
  watching(invocationId: string): void {
    // Bounded: an entry forgotten early only leaves the others a watch that ages out.
    if (this.announced.size >= MAX_ANNOUNCED) this.announced.clear();
    this.announced.add(invocationId);
  }

  /**
   * An invocation this process ran has finished (its outcome is committed): the completion to send to
   * the others, or null when none watches it. It is sent without what was recorded (a ResponseBody held
   * for seconds, sent between processes): a waiter in another process reads the store, as it would
   * without the relay.
   */
  completedHere(announced: CompletionEvent): CompletionEvent | null {
    const event = completionEvent({ id: announced.invocationId, botId: announced.botId }, announced.status);
    const id = event.invocationId;
    const now = this.now();
    this.recent.set(id, { event, at: now });
    for (const [old, { at }] of this.recent) {
      if (now - at <= RECENT_MS) break;
      this.recent.delete(old);
    }
    const watchedElsewhere = this.watched.delete(id);
    const watchedHere = this.announced.delete(id);
    return watchedElsewhere || watchedHere ? event : null;
  }

  /** Another process sent the completion of `invocationId`: nobody needs it from here any more. */
  completedElsewhere(invocationId: string): void {
    this.watched.delete(invocationId);
    this.announced.delete(invocationId);
  }

  /**
   * Another process watches `invocationId`: the completion to answer it with at once when it finished
   * here within RECENT_MS, else null (it is sent when it finishes here, if it does).
   */
  watchedElsewhere(invocationId: string): CompletionEvent | null {
    const done = this.recent.get(invocationId);
    if (done) return done.event;
    this.watched.set(invocationId, this.now());
    return null;
  }

  /** Watches older than the longest wait (a sync call's) are dropped: their invocation finished elsewhere, or expired. */
  forgetOldWatches(): void {
    const now = this.now();
    for (const [id, since] of this.watched) {
      if (now - since <= MAX_WATCH_MS) break;
      this.watched.delete(id);
    }
  }
}
