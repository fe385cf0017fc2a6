import type {
  ActiveCount,
  CallbackShare,
  ClaimedInvocation,
  Completion,
  Clock,
  IdempotencyRecord,
  Invocation,
  InvocationError,
  InvocationListFilter,
  InvocationRef,
  StoredInvocationState,
  InvocationStatus,
  InvocationStore,
  InvocationSummary,
  InvocationTiming,
  LogBatch,
  LogLine,
  NewInvocation,
  Outcome,
  Progress,
  Suspension,
} from '@gi/domain';
import { assertEntityFits, claimedInvocation, outcomeJson, recordedOutcomeJson } from '@gi/domain';
import type { GroupCommit } from './group-commit';
import {
  claimFactsOf,
  CLAIMED_COLUMNS,
  createdCallbackState,
  CREATED_COLUMNS,
  STATE_COLUMNS,
  SUMMARY_COLUMNS,
  TIMING_COLUMNS,
  toCreated,
  toInvocation,
  toPayloadRow,
  toRecord,
  toState,
  toSummary,
} from './invocation-rows';
import type { ClaimedRow, CreatedRow, InvocationRow, KeyRow, LogBatchRow, PayloadRow, StateRow, SummaryRow } from './invocation-rows';
import { RecentlyCreated } from './recently-created';
import type { SqliteDatabase } from './sqlite-database';

/**
 * The conditions of the partial indexes (schema.ts), stated in the queries that use them: SQLite uses a
 * partial index only when the query names its condition, and does not infer it from `status = 'Running'`.
 */
const IN_FLIGHT = "status IN ('Queued', 'Running')";
const FAILURES = "status IN ('Failed', 'Cancelled')";
const WAITING = "status = 'Waiting'";
/** A pending callback falls due when its invocation finishes (its due time stays empty until then, so no sweep meets it earlier). */
const CALLBACK_FALLS_DUE = "callback_due_at = CASE WHEN callback_state = 'pending' THEN @now ELSE callback_due_at END";

/**
 * A listing by status reads the partial index holding that status, so a bot's long history of completed
 * runs is never scanned for its few running or failed ones; completed ones are most rows, found at once
 * newest first. Named outright: without statistics SQLite would pick the index that gives the order.
 */
const STATUS_LISTINGS: Partial<Record<InvocationStatus, { index: string; condition: string }>> = {
  Queued: { index: 'invocations_in_flight', condition: IN_FLIGHT },
  Running: { index: 'invocations_in_flight', condition: IN_FLIGHT },
  Waiting: { index: 'invocations_waiting', condition: WAITING },
  Failed: { index: 'invocations_failures', condition: FAILURES },
  Cancelled: { index: 'invocations_failures', condition: FAILURES },
};

/** Queued, or Running with an expired lease, becomes Running under the claimer's lease with the next attempt. */
const CLAIM = `UPDATE invocations
  SET status = 'Running', attempt = attempt + 1, lease_owner = @owner, lease_until = @leaseUntil, started_at = @now, progress = NULL
  WHERE id = @id AND bot_id = @botId AND expire_at > @now
    AND (status = 'Queued' OR (status = 'Running' AND lease_until < @now))`;

export class SqliteInvocationStore implements InvocationStore {
  private readonly statements;
  private readonly createWithKeyTransaction;
  /** The invocations created here lately, when this process claims them too; null when it never does. */
  private readonly createdHere: RecentlyCreated | null;

  constructor(
    private readonly db: SqliteDatabase,
    private readonly clock: Clock,
    /** The writes of every invocation's life (create, claim, progress, complete) share commits under load. */
    private readonly writes: GroupCommit,
    claimsWhatItCreates = true,
  ) {
    this.createdHere = claimsWhatItCreates ? new RecentlyCreated() : null;
    this.statements = {
      insert: db.prepare(`INSERT INTO invocations
        (id, bot_id, token_id, entity_name, integration_id, integration_version, pool, mode, endpoint, response_content_type,
         status, created_at, published_at, expire_at, callback_url, callback_state, callback_due_at)
        VALUES (@id, @botId, @tokenId, @entityName, @integrationId, @integrationVersion, @pool, @mode, @endpoint,
         @responseContentType, 'Queued', @createdAt, @createdAt, @expireAt, @callbackUrl, ?, NULL)`),
      insertPayload: db.prepare(`INSERT INTO invocation_payloads (id, entity, raw_body, raw_body_start, raw_body_end, inbound)
        VALUES (@id, @entity, @raw_body, @raw_body_start, @raw_body_end, @inbound)`),
      get: db.prepare(`SELECT i.*, p.entity, p.raw_body, p.raw_body_start, p.raw_body_end, p.inbound FROM invocations i JOIN invocation_payloads p ON p.id = i.id
        WHERE i.id = ? AND i.bot_id = ? AND i.expire_at > ?`),
      payload: db.prepare('SELECT entity, raw_body, raw_body_start, raw_body_end, inbound FROM invocation_payloads WHERE id = ?'),
      logBatches: db.prepare('SELECT attempt, lines FROM invocation_logs WHERE bot_id = ? AND invocation_id = ? ORDER BY attempt, seq'),
      getState: db.prepare(`SELECT ${STATE_COLUMNS} FROM invocations WHERE id = ? AND bot_id = ? AND expire_at > ?`),
      // The claim of an invocation this store created lately needs only the attempt (and the journal's count) back; others what creation stored.
      claimCreatedHere: db.prepare(`${CLAIM} RETURNING ${CLAIMED_COLUMNS}`),
      claim: db.prepare(`${CLAIM} RETURNING ${CLAIMED_COLUMNS}, ${CREATED_COLUMNS}`),
      renew: db.prepare(`UPDATE invocations SET lease_until = @leaseUntil
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner`),
      progress: db.prepare(`UPDATE invocations SET progress = @progress
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner`),
      // A batch of the running attempt, while its owner holds the lease; a batch already stored stays as it is.
      appendLogs: db.prepare(`INSERT INTO invocation_logs (bot_id, invocation_id, attempt, seq, lines, expire_at)
        SELECT bot_id, id, attempt, @seq, @lines, expire_at FROM invocations
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner AND attempt = @attempt
        ON CONFLICT DO NOTHING`),
      leasedAttempt: db.prepare(`SELECT 1 FROM invocations
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner AND attempt = @attempt`),
      complete: db.prepare(`UPDATE invocations
        SET status = @status, outcome = @outcome, logs = @logs, finished_at = @now, lease_owner = NULL, lease_until = NULL, ${CALLBACK_FALLS_DUE}
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner
        RETURNING watched, retain_ms`),
      watch: db.prepare(`UPDATE invocations SET watched = 1 WHERE id = ? AND bot_id = ? AND expire_at > ? RETURNING ${STATE_COLUMNS}`),
      // Gives up on or cancels an unfinished invocation, whatever its lease.
      end: db.prepare(`UPDATE invocations
        SET status = @status, outcome = @outcome, finished_at = @now, lease_owner = NULL, lease_until = NULL, waiting = NULL, ${CALLBACK_FALLS_DUE}
        WHERE id = @id AND bot_id = @botId AND status IN ('Queued', 'Running', 'Waiting') AND expire_at > @now
        RETURNING retain_ms`),
      // An invocation that ever suspended is kept as long as its TTL from its end, like any other (a separate
      // statement, so that the others' finishing update leaves their expiry index entry alone).
      expireFromEnd: db.prepare('UPDATE invocations SET expire_at = finished_at + retain_ms WHERE id = ?'),
      // Suspends the lease owner's run: Waiting until its wake time, or Queued again when an event completed
      // the wait it suspends on meanwhile (@requeue). Its TTL as created is kept once, its expiry moved on.
      suspend: db.prepare(`UPDATE invocations
        SET status = CASE WHEN @requeue THEN 'Queued' ELSE 'Waiting' END, waiting = CASE WHEN @requeue THEN NULL ELSE @waiting END,
          wake_at = @until, published_at = CASE WHEN @requeue THEN @now ELSE published_at END, lease_owner = NULL, lease_until = NULL,
          active_ms = active_ms + @activeMs, progress_attempt = attempt,
          retain_ms = COALESCE(retain_ms, expire_at - created_at), expire_at = MAX(expire_at, @keepUntil)
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner AND attempt = @attempt`),
      // The wait a run suspends on is still under way unless an event completed it (InvocationStore.suspend).
      eventWaitOpen: db.prepare(`SELECT 1 FROM invocation_journal WHERE invocation_id = ? AND name = ? AND kind = 'event' AND status = 'waiting' LIMIT 1`),
      // Woken ones are published by the caller at once, so the republish sweep leaves them alone.
      wakeDue: db.prepare(`UPDATE invocations SET status = 'Queued', waiting = NULL, published_at = @now
        WHERE rowid IN (SELECT rowid FROM invocations WHERE ${WAITING} AND wake_at <= @now AND expire_at > @now ORDER BY wake_at LIMIT @limit)
        RETURNING id, bot_id, pool, wake_at`),
      countWaiting: db.prepare(`SELECT COUNT(*) FROM invocations WHERE ${WAITING} AND expire_at > ?`).pluck(),
      // A requeued invocation counts as never published, so the next sweep publishes it.
      requeue: db.prepare(`UPDATE invocations SET status = 'Queued', lease_owner = NULL, lease_until = NULL, published_at = 0
        WHERE ${IN_FLIGHT} AND status = 'Running' AND lease_until < ? RETURNING id, bot_id`),
      releaseLease: db.prepare(`UPDATE invocations SET status = 'Queued', lease_owner = NULL, lease_until = NULL
        WHERE id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner`),
      releaseLeasesOf: db.prepare(`UPDATE invocations SET status = 'Queued', lease_owner = NULL, lease_until = NULL, published_at = 0
        WHERE ${IN_FLIGHT} AND status = 'Running' AND lease_owner = ? RETURNING id, bot_id`),
      takeUnpublished: db.prepare(`UPDATE invocations SET published_at = @now
        WHERE id IN (SELECT id FROM invocations
          WHERE ${IN_FLIGHT} AND status = 'Queued' AND published_at < @before AND expire_at > @now ORDER BY created_at LIMIT @limit)
        RETURNING id, bot_id, pool`),
      // A pending callback is due once its invocation finished and its time came.
      takeDueCallbacks: db.prepare(`UPDATE invocations SET callback_due_at = @leaseUntil
        WHERE id IN (SELECT id FROM invocations
          WHERE callback_state = 'pending' AND callback_due_at <= @now AND status IN ('Completed', 'Failed', 'Cancelled') AND expire_at > @now
          ORDER BY callback_due_at LIMIT @limit)
        RETURNING id, bot_id`),
      // The same, in turns between bots: each bot's n-th due one after every bot's (n-1)-th, and no bot past
      // its share (@busy: what the sender has in flight per bot, a JSON object).
      takeDueCallbacksShared: db.prepare(`UPDATE invocations SET callback_due_at = @leaseUntil
        WHERE id IN (SELECT due.id FROM (
            SELECT id, bot_id, callback_due_at, ROW_NUMBER() OVER (PARTITION BY bot_id ORDER BY callback_due_at) AS nth
            FROM invocations
            WHERE callback_state = 'pending' AND callback_due_at <= @now AND status IN ('Completed', 'Failed', 'Cancelled') AND expire_at > @now
          ) AS due LEFT JOIN json_each(@busy) AS busy ON busy.key = due.bot_id
          WHERE due.nth + COALESCE(busy.value, 0) <= @perBot
          ORDER BY due.nth, due.callback_due_at LIMIT @limit)
        RETURNING id, bot_id`),
      recordCallback: db.prepare(`UPDATE invocations
        SET callback_attempts = callback_attempts + 1, callback_error = @error, callback_due_at = @next,
            callback_state = CASE WHEN @error IS NULL THEN 'delivered' WHEN @next IS NULL THEN 'failed' ELSE 'pending' END,
            callback_delivered_at = CASE WHEN @error IS NULL THEN @at END
        WHERE id = @id AND bot_id = @botId AND callback_state = 'pending'`),
      countActive: db.prepare(`SELECT token_id, COUNT(*) AS n FROM invocations
        WHERE bot_id = ? AND ${IN_FLIGHT} AND expire_at > ? GROUP BY token_id`),
      timings: db.prepare(`SELECT ${TIMING_COLUMNS} FROM invocations
        WHERE bot_id = @botId AND created_at >= @since AND expire_at > @now ORDER BY created_at DESC LIMIT @limit`),
      // Never one whose run is under way: it goes on and records its outcome; it goes once that is done.
      deleteExpired: db.prepare('DELETE FROM invocations WHERE expire_at <= @now AND (lease_owner IS NULL OR lease_until < @now)'),
      // The lines of invocations that are gone (an invocation spared while it runs keeps its own).
      deleteExpiredLogs: db.prepare(`DELETE FROM invocation_logs WHERE expire_at <= ?
        AND NOT EXISTS (SELECT 1 FROM invocations i WHERE i.bot_id = invocation_logs.bot_id AND i.id = invocation_logs.invocation_id)`),
      deleteExpiredKeys: db.prepare('DELETE FROM idempotency_keys WHERE expire_at <= ?'),
      deleteBotInvocations: db.prepare('DELETE FROM invocations WHERE bot_id = ?'),
      deleteBotLogs: db.prepare('DELETE FROM invocation_logs WHERE bot_id = ?'),
      deleteBotKeys: db.prepare('DELETE FROM idempotency_keys WHERE bot_id = ?'),
      // Takes the key unless a live record holds it (an expired one is overwritten).
      takeKey: db.prepare(`INSERT INTO idempotency_keys (bot_id, key, fingerprint, invocation_id, created_at, expire_at)
        VALUES (@botId, @key, @fingerprint, @invocationId, @createdAt, @expireAt)
        ON CONFLICT (bot_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, invocation_id = excluded.invocation_id,
          created_at = excluded.created_at, expire_at = excluded.expire_at
        WHERE idempotency_keys.expire_at <= excluded.created_at`),
      getKey: db.prepare('SELECT * FROM idempotency_keys WHERE bot_id = ? AND key = ?'),
      recentDurations: db.prepare(`SELECT finished_at - started_at AS duration FROM invocations
        WHERE bot_id = ? AND integration_id = ? AND finished_at IS NOT NULL AND started_at IS NOT NULL
        ORDER BY finished_at DESC LIMIT ?`),
    };
    // Key and invocation together or neither (a savepoint within the group commit's BEGIN IMMEDIATE
    // transaction, so processes sharing the file take the key one at a time).
    this.createWithKeyTransaction = db.transaction((invocation: NewInvocation, record: IdempotencyRecord): IdempotencyRecord | null => {
      if (this.statements.takeKey.run(record).changes === 0) {
        return toRecord(this.statements.getKey.get(record.botId, record.key) as KeyRow);
      }
      this.insert(invocation);
      return null;
    });
  }

  private insert(invocation: NewInvocation): void {
    this.statements.insert.run(invocation, createdCallbackState(invocation));
    this.statements.insertPayload.run(toPayloadRow(invocation));
  }

  async create(invocation: NewInvocation): Promise<void> {
    assertEntityFits(invocation.entityJson, invocation.rawBody);
    await this.writes.write(() => this.insert(invocation));
    this.createdHere?.remember(invocation);
  }

  async createWithKey(invocation: NewInvocation, record: IdempotencyRecord): Promise<IdempotencyRecord | null> {
    assertEntityFits(invocation.entityJson, invocation.rawBody);
    const holder = await this.writes.write(() => this.createWithKeyTransaction(invocation, record));
    if (!holder) this.createdHere?.remember(invocation);
    return holder;
  }

  /** The row first, then the batches: a completion in between adds lines the batches lack, never a line twice. */
  async get(ref: InvocationRef): Promise<Invocation | null> {
    const row = this.statements.get.get(ref.id, ref.botId, this.clock.now()) as (InvocationRow & PayloadRow) | undefined;
    if (!row) return null;
    return toInvocation(row, this.statements.logBatches.all(ref.botId, ref.id) as LogBatchRow[]);
  }

  async getState(ref: InvocationRef): Promise<StoredInvocationState | null> {
    const row = this.statements.getState.get(ref.id, ref.botId, this.clock.now()) as StateRow | undefined;
    return row ? toState(row) : null;
  }

  async claim(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<ClaimedInvocation | null> {
    const lease = { owner, leaseUntil: now + leaseMs, now };
    const params = { id: ref.id, botId: ref.botId, ...lease };
    const created = this.createdHere?.take(ref);
    if (created) {
      const claimed = await this.writes.write(() => this.statements.claimCreatedHere.get(params) as ClaimedRow | undefined);
      return claimed ? claimedInvocation(created, claimFactsOf(claimed), lease) : null;
    }
    // The payload read in the claim's own transaction, right after it.
    const claimed = await this.writes.write(() => {
      const row = this.statements.claim.get(params) as (Omit<CreatedRow, keyof PayloadRow> & ClaimedRow) | undefined;
      // The payload's columns added to the row read just now: two spreads into a new object were promoted to V8's old generation wholesale on Node 20.
      return row && Object.assign(row, this.statements.payload.get(row.id) as PayloadRow);
    });
    return claimed ? claimedInvocation(toCreated(claimed), claimFactsOf(claimed), lease) : null;
  }

  async renewLease(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<boolean> {
    const params = { id: ref.id, botId: ref.botId, owner, leaseUntil: now + leaseMs };
    return (await this.writes.write(() => this.statements.renew.run(params))).changes === 1;
  }

  async setProgress(ref: InvocationRef, owner: string, progress: Progress): Promise<void> {
    const params = { id: ref.id, botId: ref.botId, owner, progress: JSON.stringify(progress) };
    await this.writes.write(() => this.statements.progress.run(params));
  }

  async appendLogs(ref: InvocationRef, owner: string, batch: LogBatch): Promise<boolean> {
    const params = { id: ref.id, botId: ref.botId, owner, attempt: batch.attempt, seq: batch.seq, lines: JSON.stringify(batch.lines) };
    const { appendLogs, leasedAttempt } = this.statements;
    // Nothing inserted: the batch was stored before (the lease still held), or the lease is not held.
    return this.writes.write(() => appendLogs.run(params).changes === 1 || leasedAttempt.get(params) !== undefined);
  }

  async watch(ref: InvocationRef): Promise<StoredInvocationState | null> {
    const row = await this.writes.write(() => this.statements.watch.get(ref.id, ref.botId, this.clock.now()) as StateRow | undefined);
    return row ? toState(row) : null;
  }

  async complete(ref: InvocationRef, owner: string, outcome: Outcome, logs: LogLine[], now: number): Promise<Completion | null> {
    // The ref's two fields by name: callers pass whole invocations, and a copy of all their fields per write
    // measured as most of what the embedded service promoted to V8's old generation.
    const params = { id: ref.id, botId: ref.botId, owner, now, status: outcome.status, outcome: recordedOutcomeJson(outcome, logs), logs: JSON.stringify(logs) };
    const row = await this.writes.write(() => this.finished(ref, this.statements.complete.get(params) as { watched: number; retain_ms: number | null } | undefined));
    return row ? { watched: row.watched === 1 } : null;
  }

  async giveUp(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Failed', error }, now);
  }

  async cancel(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Cancelled', error }, now);
  }

  /** Written at once, outside the group commit (whose batch never spans a turn): done when this returns. */
  quarantine(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    try {
      const params = { id: ref.id, botId: ref.botId, status: 'Failed', outcome: outcomeJson({ status: 'Failed', error }), now };
      return Promise.resolve(this.db.transaction(() => this.finished(ref, this.statements.end.get(params) as { retain_ms: number | null } | undefined) !== undefined)());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async end(ref: InvocationRef, outcome: Exclude<Outcome, { status: 'Completed' }>, now: number): Promise<boolean> {
    const params = { id: ref.id, botId: ref.botId, status: outcome.status, outcome: outcomeJson(outcome), now };
    return (await this.writes.write(() => this.finished(ref, this.statements.end.get(params) as { retain_ms: number | null } | undefined))) !== undefined;
  }

  /** After a finishing update (its row, undefined when none matched): an invocation that ever suspended expires from its end. */
  private finished<T extends { retain_ms: number | null }>(ref: InvocationRef, row: T | undefined): T | undefined {
    if (row && row.retain_ms !== null) this.statements.expireFromEnd.run(ref.id);
    return row;
  }

  async suspend(ref: InvocationRef, lease: { owner: string; attempt: number }, suspension: Suspension, now: number): Promise<'waiting' | 'requeued' | null> {
    const { reason } = suspension;
    const { eventWaitOpen, suspend } = this.statements;
    return this.writes.write(() => {
      // In the same transaction as the update: an event sent before it completed the wait (and found the
      // invocation Running, so could not wake it); one sent after it finds the invocation Waiting.
      const requeue = reason.kind === 'event' && eventWaitOpen.get(ref.id, reason.name) === undefined;
      const params = {
        id: ref.id,
        botId: ref.botId,
        owner: lease.owner,
        attempt: lease.attempt,
        requeue: requeue ? 1 : 0,
        waiting: JSON.stringify(reason),
        until: reason.until,
        activeMs: suspension.activeMs,
        keepUntil: suspension.keepUntil,
        now,
      };
      if (suspend.run(params).changes === 0) return null;
      return requeue ? 'requeued' : 'waiting';
    });
  }

  async wakeDue(now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    const rows = this.statements.wakeDue.all({ now, limit }) as Array<{ id: string; bot_id: string; pool: string; wake_at: number }>;
    return rows.sort((a, b) => a.wake_at - b.wake_at).map((row) => ({ id: row.id, botId: row.bot_id, pool: row.pool }));
  }

  async countWaiting(now: number): Promise<number> {
    return this.statements.countWaiting.get(now) as number;
  }

  async requeueExpiredLeases(before: number): Promise<InvocationRef[]> {
    const rows = this.statements.requeue.all(before) as Array<{ id: string; bot_id: string }>;
    return rows.map((row) => ({ id: row.id, botId: row.bot_id }));
  }

  async releaseLease(ref: InvocationRef, owner: string): Promise<boolean> {
    const params = { id: ref.id, botId: ref.botId, owner };
    return (await this.writes.write(() => this.statements.releaseLease.run(params))).changes === 1;
  }

  async releaseLeasesOf(owner: string): Promise<InvocationRef[]> {
    const rows = this.statements.releaseLeasesOf.all(owner) as Array<{ id: string; bot_id: string }>;
    return rows.map((row) => ({ id: row.id, botId: row.bot_id }));
  }

  async takeUnpublished(before: number, now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    const rows = this.statements.takeUnpublished.all({ before, now, limit }) as Array<{ id: string; bot_id: string; pool: string }>;
    return rows.map((row) => ({ id: row.id, botId: row.bot_id, pool: row.pool }));
  }

  async list(botId: string, filter: InvocationListFilter): Promise<InvocationSummary[]> {
    const where = ['bot_id = @botId', 'expire_at > @now'];
    const byStatus = filter.status ? STATUS_LISTINGS[filter.status] : undefined;
    if (byStatus) where.push(byStatus.condition);
    if (filter.status) where.push('status = @status');
    if (filter.integrationId) where.push('integration_id = @integrationId');
    // The next page: `created_at <=` keeps the search on the index's range, the rest breaks ties by id.
    if (filter.after) where.push('created_at <= @afterAt AND (created_at < @afterAt OR id > @afterId)');
    const source = byStatus ? `invocations INDEXED BY ${byStatus.index}` : 'invocations';
    const rows = this.db
      .prepare(`SELECT ${SUMMARY_COLUMNS} FROM ${source} WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id LIMIT @limit`)
      .all({ botId, now: this.clock.now(), status: filter.status, integrationId: filter.integrationId, limit: filter.limit, afterAt: filter.after?.createdAt, afterId: filter.after?.id }) as SummaryRow[];
    return rows.map(toSummary);
  }

  async takeDueCallbacks(now: number, leaseMs: number, limit: number, share?: CallbackShare): Promise<InvocationRef[]> {
    const rows = (
      share
        ? this.statements.takeDueCallbacksShared.all({ now, leaseUntil: now + leaseMs, limit, perBot: share.perBot, busy: JSON.stringify(Object.fromEntries(share.inFlight)) })
        : this.statements.takeDueCallbacks.all({ now, leaseUntil: now + leaseMs, limit })
    ) as Array<{ id: string; bot_id: string }>;
    return rows.map((row) => ({ id: row.id, botId: row.bot_id }));
  }

  async recordCallbackAttempt(ref: InvocationRef, attempt: { at: number; error: string | null; nextAttemptAt: number | null }): Promise<void> {
    this.statements.recordCallback.run({ id: ref.id, botId: ref.botId, at: attempt.at, error: attempt.error, next: attempt.nextAttemptAt });
  }

  async countActive(botId: string, now: number): Promise<ActiveCount> {
    const rows = this.statements.countActive.all(botId, now) as Array<{ token_id: string | null; n: number }>;
    const count: ActiveCount = { total: 0, byToken: {} };
    for (const row of rows) {
      count.total += row.n;
      if (row.token_id !== null) count.byToken[row.token_id] = row.n;
    }
    return count;
  }

  async timings(botId: string, since: number, limit: number): Promise<InvocationTiming[]> {
    return this.statements.timings.all({ botId, since, limit, now: this.clock.now() }) as InvocationTiming[];
  }

  async recentDurations(botId: string, integrationId: string, limit: number): Promise<number[]> {
    const rows = this.statements.recentDurations.all(botId, integrationId, limit) as Array<{ duration: number }>;
    return rows.map((row) => row.duration);
  }

  async deleteBot(botId: string): Promise<number> {
    // Keys first, in one write with the rest: no key is left naming an invocation that is gone.
    return this.writes.write(() => {
      this.statements.deleteBotKeys.run(botId);
      this.statements.deleteBotLogs.run(botId);
      return this.statements.deleteBotInvocations.run(botId).changes;
    });
  }

  async deleteExpired(now: number): Promise<number> {
    this.statements.deleteExpiredKeys.run(now);
    const deleted = this.statements.deleteExpired.run({ now }).changes;
    this.statements.deleteExpiredLogs.run(now);
    return deleted;
  }
}
