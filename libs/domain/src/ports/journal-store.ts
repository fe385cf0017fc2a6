import type { InvocationRef } from '../invocation';
import type { JournalEntry, JournalLimits, StepRecord, WaitRecord } from '../journal';

/** Who may write an invocation's journal: the executor holding its lease, for the attempt it runs. */
export interface JournalLease {
  owner: string;
  attempt: number;
}

/** A step as listings show it: no result, only its size. */
export type StepSummary = Omit<JournalEntry, 'resultJson'> & {
  /** The size of its result (or event payload) as JSON text, in bytes; 0 when it has none. */
  resultBytes: number;
};

/** What became of an event sent to an invocation (JournalStore.sendEvent). */
export type EventDelivery =
  /** It completed a wait of the Waiting invocation, which is now Queued: publish its job. */
  | { delivered: 'resumed'; pool: string }
  /** It completed a wait of an invocation that is not Waiting (its run is suspending): the suspension requeues it. */
  | { delivered: 'taken' }
  /** No wait for it yet: it is kept for the invocation's next wait of that name. */
  | { delivered: 'kept' };

/**
 * The journal of durable runs (libs/domain journal.ts): one entry per invocation, step name and
 * occurrence, kept as long as its invocation, plus the events sent to an invocation before a wait took
 * them. Writes that come from a run hold its lease (`JournalLease`): a run that lost its lease journals
 * nothing. A limit passed (`JournalLimits`) is refused with `JournalLimitExceeded` and nothing is written.
 */
export interface JournalStore {
  /** The invocation's journal, in the order its entries were first written; empty for none (or an unknown invocation). */
  read(ref: InvocationRef): Promise<JournalEntry[]>;
  /** Its latest `limit` entries without their results, newest first; with `before`, those written before that one (the next page). */
  list(ref: InvocationRef, options: { limit: number; before?: Pick<JournalEntry, 'name' | 'occurrence'> }): Promise<StepSummary[]>;
  /**
   * Records a step's end or a failed attempt (`retrying`). An entry already `done` or `failed` is never
   * changed: the entry as stored is returned instead, so a slower attempt never overwrites a result.
   * The invocation's step count and journal size grow with a new entry, and it counts as progress.
   * Null when the lease is not held.
   */
  record(ref: InvocationRef, lease: JournalLease, step: StepRecord, limits: JournalLimits): Promise<JournalEntry | null>;
  /**
   * Begins a wait, or returns it as begun. A sleep is recorded `waiting` until its time. An event wait takes
   * the oldest event of its name kept for the invocation (it is recorded `done` with the event's
   * payload, and the event is no longer kept), or is recorded `waiting` until its timeout. Null when
   * the lease is not held.
   */
  beginWait(ref: InvocationRef, lease: JournalLease, wait: WaitRecord, limits: JournalLimits): Promise<JournalEntry | null>;
  /**
   * Ends an event wait whose timeout passed: `waiting` becomes `done` with a `null` result (JSON `null`),
   * unless an event completed it first; returns the entry as stored. Null when the lease is not held.
   */
  timeOut(ref: InvocationRef, lease: JournalLease, step: Pick<JournalEntry, 'name' | 'occurrence'>, now: number): Promise<JournalEntry | null>;
  /**
   * An event sent to an unfinished invocation: it completes the invocation's first `waiting` event wait of
   * that name whose timeout has not passed at `at` (`done`, its payload as the result), waking the
   * invocation if it is Waiting; with no such wait it is kept for the next one. Of an event and a
   * suspension that race, one sees the other (`InvocationStore.suspend`). Null when the invocation is
   * unknown, expired or finished. `JournalLimitExceeded` when the payload, the journal or the kept
   * events would pass the limits.
   */
  sendEvent(ref: InvocationRef, event: { name: string; payloadJson: string; at: number }, limits: JournalLimits): Promise<EventDelivery | null>;
}

/** A journal write refused by a limit; the message says which limit and its setting, and is shown to the connector or the sender. */
export class JournalLimitExceeded extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalLimitExceeded';
  }
}
