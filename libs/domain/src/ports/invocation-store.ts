import type { InvocationError } from '../errors';
import type { IdempotencyRecord } from '../idempotency';
import type { WaitReason } from '../journal';
import type { ClaimedInvocation, Invocation, InvocationRef, InvocationStatus, InvocationSummary, InvocationTiming, LogBatch, LogLine, NewInvocation, Outcome, Progress, StoredInvocationState } from '../invocation';

export interface InvocationListFilter {
  status?: InvocationStatus;
  integrationId?: string;
  limit: number;
  /** Only those listed after this one (newest first: older, or as old with a greater id): the next page. */
  after?: InvocationListPosition;
}

/** Where an invocation sits in a listing, newest first and then by id. */
export interface InvocationListPosition {
  createdAt: number;
  id: string;
}

export interface ActiveCount {
  total: number;
  /** By the id of the token that started them (invocations started without one are not listed). */
  byToken: Record<string, number>;
}

/**
 * Where an invocation stands, for its caller: what the sync reply and every poll answer need (its status,
 * attempt, progress and outcome), without the request entity or the connector's logs.
 */
export type InvocationState = Omit<StoredInvocationState, 'mode'>;

/** An outcome `complete` recorded. */
export interface Completion {
  /**
   * Some process besides a sync caller's gateway waits for the invocation (`watch`): its completion event
   * must be published, not only replied to that gateway.
   */
  watched: boolean;
}

/** A run that suspends: why and until when it waits, and the run time it spent. */
export interface Suspension {
  reason: WaitReason;
  /** The attempt's run time, added to the invocation's `activeMs`. */
  activeMs: number;
  /**
   * Until when the invocation and its journal and files must be kept while it waits (its lifetime limit
   * plus INVOCATION_TTL_HOURS): its expiry is moved there, and counts from its end again once it finishes.
   */
  keepUntil: number;
}

/** How a callback sender shares its deliveries between bots (takeDueCallbacks). */
export interface CallbackShare {
  /** Deliveries of one bot a sender has in flight at once, at most. */
  perBot: number;
  /** Deliveries the sender has in flight now (taken, their attempt not recorded yet), by bot. */
  inFlight: ReadonlyMap<string, number>;
}

export interface InvocationStore {
  /** Persists a new invocation in status Queued. Resolves only once it is durable. */
  create(invocation: NewInvocation): Promise<void>;
  /**
   * Persists a new invocation together with the Idempotency-Key record that names it, atomically: when
   * the bot holds no live record of `record.key` (an expired one is replaced), both are stored and null
   * is returned; otherwise nothing is stored and the live record is returned. Of concurrent creates with
   * one key exactly one stores anything.
   */
  createWithKey(invocation: NewInvocation, record: IdempotencyRecord): Promise<IdempotencyRecord | null>;
  get(ref: InvocationRef): Promise<Invocation | null>;
  /** The same invocation's state alone, neither reading nor decoding its entity and logs; null when `get` is. */
  getState(ref: InvocationRef): Promise<StoredInvocationState | null>;
  /**
   * Notes that a process other than the sync caller's gateway waits for this invocation (a repeat of the
   * call, a poll, the gateway itself once its direct reply cannot come), so the executor that completes it
   * publishes its completion event (`Completion.watched`). Returns the state as of that write, which the
   * store orders with the completion: either the completion sees the mark, or the state returned is
   * finished. Null when `getState` would be.
   */
  watch(ref: InvocationRef): Promise<StoredInvocationState | null>;
  /**
   * Claims an invocation for a run: Queued, or Running with an expired lease, becomes Running with
   * attempt + 1 and a lease for `owner`. Null when it is terminal or leased by someone else. The
   * invocation returned leaves out the lines earlier attempts logged (`get` has them), and holds its
   * entity as the JSON text stored.
   */
  claim(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<ClaimedInvocation | null>;
  /** Extends the lease while the run goes on; false when the lease was lost. */
  renewLease(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<boolean>;
  setProgress(ref: InvocationRef, owner: string, progress: Progress): Promise<void>;
  /**
   * Appends lines of the running attempt while it runs, so they can be read before it ends and
   * survive its executor: only while the invocation is Running at `batch.attempt` under `owner`'s
   * lease (false otherwise, and nothing is stored). A batch already stored (same attempt and seq) is
   * not stored again.
   */
  appendLogs(ref: InvocationRef, owner: string, batch: LogBatch): Promise<boolean>;
  /**
   * Records the outcome once: only the lease owner of a Running invocation can complete it. `logs`
   * are the attempt's lines not appended yet (they follow those that were). Data that cannot be
   * serialised is refused with UnrecordableOutcome, and nothing is written. Null when the lease was not held.
   */
  complete(ref: InvocationRef, owner: string, outcome: Outcome, logs: LogLine[], now: number): Promise<Completion | null>;
  /**
   * Records a Failed outcome for an invocation that cannot be run (a poison job), whatever its lease,
   * without reading its data. False when it is already finished.
   */
  giveUp(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean>;
  /**
   * `giveUp` for a process about to exit (its handling of the invocation crashed it): a store that
   * can write synchronously (SQLite) has written it when the call returns; others send it at once,
   * and the caller waits for it only briefly.
   */
  quarantine(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean>;
  /**
   * Cancels a Queued, Running or Waiting invocation, whatever its lease: it becomes Cancelled with `error` as
   * its outcome, so no executor claims or completes it afterwards. False when it is already finished.
   */
  cancel(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean>;
  /**
   * Suspends a durable run (only the lease owner of a Running invocation at `attempt`): it becomes
   * Waiting with `suspension.reason`, its lease released, its run time added to `activeMs`, and it is
   * kept until `suspension.keepUntil`. An event wait whose journal entry an event completed meanwhile
   * becomes Queued instead, to be published at once (`requeued`): the event's sender found it Running and
   * could not wake it. Null when the lease was not held.
   */
  suspend(ref: InvocationRef, lease: { owner: string; attempt: number }, suspension: Suspension, now: number): Promise<'waiting' | 'requeued' | null>;
  /**
   * Waiting invocations whose wake time came (`waiting.until` <= now) become Queued (published at `now`)
   * and are returned with their pool, oldest wake time first, at most `limit`: the sweeper publishes them.
   * Conditional, so concurrent sweepers never wake one twice.
   */
  wakeDue(now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>>;
  /** How many invocations wait (status Waiting, not expired), for the waiting-invocations gauge. */
  countWaiting(now: number): Promise<number>;
  /**
   * Hands a run back: the Running invocation whose lease `owner` holds goes back to Queued at once, its
   * lease released, so the next claim (its job requeued) takes it without waiting for the lease to end.
   * For a run its executor stopped itself (a drain deadline). False when `owner` holds no such lease.
   */
  releaseLease(ref: InvocationRef, owner: string): Promise<boolean>;
  /** Running invocations whose lease ended before `before` go back to Queued; returns them. */
  requeueExpiredLeases(before: number): Promise<InvocationRef[]>;
  /**
   * Returns to Queued (as never published) every Running invocation whose lease `owner` holds, whatever
   * its time: for an owner known to be dead (an embedded process that ended), so its work need not wait
   * for the lease to end.
   */
  releaseLeasesOf(owner: string): Promise<InvocationRef[]>;
  /**
   * Queued invocations last published before `before`: marks them published at `now` and returns them,
   * so concurrent sweepers never republish the same invocation twice in one round.
   */
  takeUnpublished(before: number, now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>>;
  list(botId: string, filter: InvocationListFilter): Promise<InvocationSummary[]>;
  /**
   * Callbacks due at `now` (of finished invocations: the first attempt, or a retry whose time came):
   * moves each one's due time `leaseMs` ahead, so concurrent senders never take the same one, and
   * returns them. A sender that dies mid-attempt leaves it to be taken again after `leaseMs`. Without
   * `share`, the earliest due first; with it, at most `share.perBot` of a bot's less those it has in
   * flight, in turns between bots (each bot's earliest first, bots by their earliest).
   */
  takeDueCallbacks(now: number, leaseMs: number, limit: number, share?: CallbackShare): Promise<InvocationRef[]>;
  /**
   * Records one attempt of a pending callback: `error` null means delivered; otherwise it is retried at
   * `nextAttemptAt`, or given up when that is null.
   */
  recordCallbackAttempt(ref: InvocationRef, attempt: { at: number; error: string | null; nextAttemptAt: number | null }): Promise<void>;
  /** The bot's invocations in flight (Queued or Running, not expired): in total and per token. */
  countActive(botId: string, now: number): Promise<ActiveCount>;
  /** Timings of the bot's invocations created at or after `since`, newest first, at most `limit`. */
  timings(botId: string, since: number, limit: number): Promise<InvocationTiming[]>;
  /** How long (finishedAt - startedAt, ms) the integration's latest finished runs took, newest first, at most `limit`. */
  recentDurations(botId: string, integrationId: string, limit: number): Promise<number[]>;
  /** Deletes invocations and Idempotency-Key records whose expireAt has passed; returns how many invocations. */
  deleteExpired(now: number): Promise<number>;
  /**
   * Deletes every invocation of the bot, its log lines, its journals and its Idempotency-Keys, whatever their state,
   * so a bot created again with the same id starts with none of them; returns how many invocations.
   * A run still under way records nothing afterwards (its invocation is gone).
   */
  deleteBot(botId: string): Promise<number>;
}
