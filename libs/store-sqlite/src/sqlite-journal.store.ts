import type { EventDelivery, InvocationRef, JournalEntry, JournalLease, JournalLimits, JournalStore, JournalUsage, StepRecord, StepSummary, WaitRecord } from '@gi/domain';
import { isSettledForRecord, journalBytesOf, journalLimitPassed, resultBytesWithin, stepEntry, TIMED_OUT_RESULT_JSON, waitEntry } from '@gi/domain';
import type { GroupCommit } from './group-commit';
import { ENTRY_COLUMNS, entryParams, SUMMARY_COLUMNS, toEntry, toStepSummary } from './journal-rows';
import type { JournalRow } from './journal-rows';
import type { SqliteDatabase } from './sqlite-database';

/** The invocation while the run at `attempt` holds its lease. */
const LEASED = "id = @id AND bot_id = @botId AND status = 'Running' AND lease_owner = @owner AND attempt = @attempt";

/**
 * The journals of durable runs in SQLite (`invocation_journal`, `invocation_events`; schema.ts). Each
 * write from a run is one short transaction of the group commit, as every write of an invocation's life
 * is: the entry looked up by its key, one conditional update of the invocation's row (the lease held,
 * the limits kept, its counters grown, its progress marked) and the entry written. The counters live on
 * the invocation's row, so the limits cost no count of the journal. A write refused by a limit is
 * refused before it writes anything.
 */
export class SqliteJournalStore implements JournalStore {
  private readonly statements;

  constructor(
    db: SqliteDatabase,
    private readonly writes: GroupCommit,
  ) {
    this.statements = {
      read: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM invocation_journal WHERE invocation_id = ? AND bot_id = ? ORDER BY seq`),
      latest: db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM invocation_journal WHERE invocation_id = @id AND bot_id = @botId ORDER BY seq DESC LIMIT @limit`),
      before: db.prepare(`SELECT ${SUMMARY_COLUMNS} FROM invocation_journal
        WHERE invocation_id = @id AND bot_id = @botId
          AND seq < (SELECT seq FROM invocation_journal WHERE invocation_id = @id AND name = @name AND occurrence = @occurrence)
        ORDER BY seq DESC LIMIT @limit`),
      entry: db.prepare(`SELECT ${ENTRY_COLUMNS} FROM invocation_journal WHERE invocation_id = ? AND name = ? AND occurrence = ?`),
      // The journal grows under the lease and within the limits, and that counts as the attempt's progress.
      grow: db.prepare(`UPDATE invocations
        SET steps = steps + @steps, journal_bytes = journal_bytes + @bytes, progress_attempt = attempt
        WHERE ${LEASED} AND (@steps = 0 OR steps + @steps <= @maxSteps) AND (@bytes <= 0 OR journal_bytes + @bytes <= @maxJournalBytes)`),
      leased: db.prepare(`SELECT steps, journal_bytes FROM invocations WHERE ${LEASED}`),
      insert: db.prepare(`INSERT INTO invocation_journal
        (invocation_id, name, occurrence, bot_id, kind, status, result, result_bytes, error, attempts, started_at, finished_at, until)
        VALUES (@id, @name, @occurrence, @botId, @kind, @status, @result, @resultBytes, @error, @attempts, @startedAt, @finishedAt, @until)`),
      update: db.prepare(`UPDATE invocation_journal
        SET status = @status, result = @result, result_bytes = @resultBytes, error = @error, attempts = @attempts, finished_at = @finishedAt, until = @until
        WHERE invocation_id = @id AND name = @name AND occurrence = @occurrence`),
      timeOut: db.prepare(`UPDATE invocation_journal SET status = 'done', result = @result, result_bytes = @resultBytes, finished_at = @now, until = NULL
        WHERE invocation_id = @id AND name = @name AND occurrence = @occurrence AND kind = 'event' AND status = 'waiting' AND until <= @now`),
      // An event for an unfinished invocation that is still kept (the sender's time decides).
      unfinished: db.prepare(`SELECT status, pool, steps, journal_bytes FROM invocations
        WHERE id = @id AND bot_id = @botId AND status IN ('Queued', 'Running', 'Waiting') AND expire_at > @at`),
      // The first wait of the event's name still under way at the event's time.
      openWait: db.prepare(`SELECT occurrence FROM invocation_journal
        WHERE invocation_id = @id AND name = @name AND kind = 'event' AND status = 'waiting' AND until > @at ORDER BY occurrence LIMIT 1`),
      completeWait: db.prepare(`UPDATE invocation_journal SET status = 'done', result = @payload, result_bytes = @bytes, finished_at = @at, until = NULL
        WHERE invocation_id = @id AND name = @name AND occurrence = @occurrence`),
      addBytes: db.prepare('UPDATE invocations SET journal_bytes = journal_bytes + @bytes WHERE id = @id'),
      // A Waiting invocation woken by an event is published by the sender at once.
      resume: db.prepare(`UPDATE invocations SET status = 'Queued', waiting = NULL, published_at = @at WHERE id = @id AND status = 'Waiting'`),
      keptEvents: db.prepare('SELECT COUNT(*) FROM invocation_events WHERE invocation_id = ?').pluck(),
      keep: db.prepare('INSERT INTO invocation_events (invocation_id, bot_id, name, payload, sent_at) VALUES (@id, @botId, @name, @payload, @at)'),
      oldestKept: db.prepare('SELECT seq, payload FROM invocation_events WHERE invocation_id = ? AND name = ? ORDER BY seq LIMIT 1'),
      take: db.prepare('DELETE FROM invocation_events WHERE seq = ?'),
    };
  }

  async read(ref: InvocationRef): Promise<JournalEntry[]> {
    return (this.statements.read.all(ref.id, ref.botId) as JournalRow[]).map(toEntry);
  }

  async list(ref: InvocationRef, options: { limit: number; before?: Pick<JournalEntry, 'name' | 'occurrence'> }): Promise<StepSummary[]> {
    const params = { id: ref.id, botId: ref.botId, limit: options.limit, name: options.before?.name, occurrence: options.before?.occurrence };
    const rows = (options.before ? this.statements.before : this.statements.latest).all(params) as JournalRow[];
    return rows.map(toStepSummary);
  }

  async record(ref: InvocationRef, lease: JournalLease, step: StepRecord, limits: JournalLimits): Promise<JournalEntry | null> {
    const resultBytes = step.status === 'done' ? resultBytesWithin(step.resultJson, limits, 'result') : 0;
    const { entry: stored, grow, insert, update } = this.statements;
    return this.writes.write(() => {
      const row = stored.get(ref.id, step.name, step.occurrence) as JournalRow | undefined;
      const existing = row && toEntry(row);
      if (existing && isSettledForRecord(existing)) return this.leaseHeld(ref, lease) ? existing : null;
      const entry = stepEntry(step, existing?.startedAt);
      const growth = { steps: existing ? 0 : 1, journalBytes: journalBytesOf(entry) - (existing ? journalBytesOf(existing) : 0) };
      if (grow.run(this.growParams(ref, lease, growth, limits)).changes === 0) return this.refusal(ref, lease, growth, limits);
      (existing ? update : insert).run(entryParams(ref.id, ref.botId, entry, resultBytes));
      return entry;
    });
  }

  async beginWait(ref: InvocationRef, lease: JournalLease, wait: WaitRecord, limits: JournalLimits): Promise<JournalEntry | null> {
    const { entry: stored, grow, insert, oldestKept, take } = this.statements;
    return this.writes.write(() => {
      const row = stored.get(ref.id, wait.name, wait.occurrence) as JournalRow | undefined;
      if (row) return this.leaseHeld(ref, lease) ? toEntry(row) : null;
      // A kept event moves into the entry: the journal's size stays, and it is kept no more.
      const kept = wait.kind === 'event' ? (oldestKept.get(ref.id, wait.name) as { seq: number; payload: string } | undefined) : undefined;
      const growth = { steps: 1, journalBytes: 0 };
      if (grow.run(this.growParams(ref, lease, growth, limits)).changes === 0) return this.refusal(ref, lease, growth, limits);
      if (kept) take.run(kept.seq);
      const entry = waitEntry(wait, kept?.payload ?? null);
      insert.run(entryParams(ref.id, ref.botId, entry, kept ? Buffer.byteLength(kept.payload) : 0));
      return entry;
    });
  }

  async timeOut(ref: InvocationRef, lease: JournalLease, step: Pick<JournalEntry, 'name' | 'occurrence'>, now: number): Promise<JournalEntry | null> {
    const { entry: stored, timeOut, addBytes } = this.statements;
    return this.writes.write(() => {
      if (!this.leaseHeld(ref, lease)) return null;
      const bytes = Buffer.byteLength(TIMED_OUT_RESULT_JSON);
      const params = { id: ref.id, name: step.name, occurrence: step.occurrence, now, result: TIMED_OUT_RESULT_JSON, resultBytes: bytes };
      // A result this small is never refused: a run whose wait timed out must be able to go on.
      if (timeOut.run(params).changes === 1) addBytes.run({ id: ref.id, bytes });
      const row = stored.get(ref.id, step.name, step.occurrence) as JournalRow | undefined;
      if (!row) throw new Error(`The journal has no wait '${step.name}' (occurrence ${step.occurrence}) to time out.`);
      return toEntry(row);
    });
  }

  async sendEvent(ref: InvocationRef, event: { name: string; payloadJson: string; at: number }, limits: JournalLimits): Promise<EventDelivery | null> {
    const bytes = resultBytesWithin(event.payloadJson, limits, 'payload');
    const s = this.statements;
    const params = { id: ref.id, botId: ref.botId, name: event.name, at: event.at, payload: event.payloadJson, bytes };
    return this.writes.write((): EventDelivery | null => {
      const invocation = s.unfinished.get(params) as { status: string; pool: string; steps: number; journal_bytes: number } | undefined;
      if (!invocation) return null;
      const wait = s.openWait.get(params) as { occurrence: number } | undefined;
      const usage: JournalUsage = { steps: invocation.steps, journalBytes: invocation.journal_bytes, keptEvents: wait ? 0 : (s.keptEvents.get(ref.id) as number) };
      const refused = journalLimitPassed(usage, { journalBytes: bytes, keptEvents: wait ? 0 : 1 }, limits);
      if (refused) throw refused;
      s.addBytes.run(params);
      if (!wait) {
        s.keep.run(params);
        return { delivered: 'kept' };
      }
      s.completeWait.run({ ...params, occurrence: wait.occurrence });
      return s.resume.run(params).changes === 1 ? { delivered: 'resumed', pool: invocation.pool } : { delivered: 'taken' };
    });
  }

  private growParams(ref: InvocationRef, lease: JournalLease, growth: { steps: number; journalBytes: number }, limits: JournalLimits) {
    return { id: ref.id, botId: ref.botId, owner: lease.owner, attempt: lease.attempt, steps: growth.steps, bytes: growth.journalBytes, maxSteps: limits.maxSteps, maxJournalBytes: limits.maxJournalBytes };
  }

  private leaseHeld(ref: InvocationRef, lease: JournalLease): boolean {
    return this.statements.leased.get({ id: ref.id, botId: ref.botId, owner: lease.owner, attempt: lease.attempt }) !== undefined;
  }

  /** Why the journal did not grow: the lease not held (null), or a limit, thrown. */
  private refusal(ref: InvocationRef, lease: JournalLease, growth: { steps: number; journalBytes: number }, limits: JournalLimits): null {
    const held = this.statements.leased.get({ id: ref.id, botId: ref.botId, owner: lease.owner, attempt: lease.attempt }) as { steps: number; journal_bytes: number } | undefined;
    if (!held) return null;
    throw journalLimitPassed({ steps: held.steps, journalBytes: held.journal_bytes, keptEvents: 0 }, growth, limits) ?? new Error('The journal write was refused.');
  }
}
