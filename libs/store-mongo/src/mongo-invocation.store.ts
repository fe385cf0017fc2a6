import { randomUUID } from 'node:crypto';
import type { Collection, Document, Filter, MatchKeysAndValues, MongoClient, Sort } from 'mongodb';
import type {
  ActiveCount,
  CallbackDelivery,
  CallbackShare,
  Clock,
  IdempotencyRecord,
  ClaimedInvocation,
  Completion,
  Invocation,
  InvocationError,
  InvocationListFilter,
  InvocationRef,
  StoredInvocationState,
  InvocationStore,
  InvocationSummary,
  InvocationTiming,
  LogBatch,
  LogLine,
  NewInvocation,
  Outcome,
  Progress,
  StoredLogLine,
  Suspension,
} from '@gi/domain';
import {
  assertEntityFits,
  invocationState,
  invocationSummary,
  invocationTiming,
  linesInOrder,
  outcomeJson,
  pendingCallback,
  rawBodyOf,
  rawBodySpan,
  recordedOutcomeJson,
  STATE_FIELDS,
  SUMMARY_FIELDS,
  TIMING_FIELDS,
  UNFINISHED_STATUSES,
  UnrecordableOutcome,
} from '@gi/domain';
import type { CallbackDocument, IdempotencyKeyDocument, InvocationDocument, LogBatchDocument } from './mongo-documents';
import { isDuplicateKey, isTooLarge, isUnavailable, retriedOnFailover, storeUnavailable } from './mongo-errors';
import { leasedAttempt } from './mongo-journal.store';
import type { JournalCollections } from './mongo-journal.store';
import { backoff, inTransaction } from './mongo-transaction';

/** The most invocations one sweep call moves; the next round takes the rest. */
const SWEEP_BATCH = 10_000;
/**
 * How long a write waits for the majority of the replica set (the write concern's wtimeout), and how
 * long a request waits for an Idempotency-Key's holder to be confirmed by it.
 */
export const MAJORITY_WAIT_MS = 10_000;
/** How long a request that failed waits for the undoing of what it may have written; the undo goes on after. */
const UNDO_WAIT_MS = 2_000;

/** The fields of a document that hold the domain's `fields` (the id is its `_id`). */
type DocumentOf<F extends keyof Invocation> = Pick<InvocationDocument, Exclude<F, 'id'> | (F extends 'id' ? '_id' : never)>;

/** A projection of exactly the domain's `fields`: a document names its fields as the domain does, but for `_id`. */
const projectionOf = (fields: ReadonlyArray<keyof Invocation>): Record<string, 0 | 1> => ({
  _id: fields.includes('id') ? 1 : 0,
  ...Object.fromEntries(fields.filter((field) => field !== 'id').map((field) => [field, 1])),
});

/** A listing's fields and the outcome its error comes from. */
const SUMMARY_PROJECTION = projectionOf([...SUMMARY_FIELDS, 'outcome']);
type SummaryDocument = DocumentOf<(typeof SUMMARY_FIELDS)[number] | 'outcome'>;

/** The state alone: the server sends neither the entity nor the logs. */
const STATE_PROJECTION = projectionOf(STATE_FIELDS);
type StateDocument = DocumentOf<(typeof STATE_FIELDS)[number]>;

const TIMING_PROJECTION = projectionOf(TIMING_FIELDS);

/**
 * Invocations in MongoDB. Every query by reference carries the bot id next to the invocation id, so
 * one bot can never reach another's invocation. Each state change is one conditional single-document
 * update, which the server applies atomically: of several claimers exactly one matches.
 */
export class MongoInvocationStore implements InvocationStore {
  constructor(
    private readonly invocations: Collection<InvocationDocument>,
    private readonly logBatches: Collection<LogBatchDocument>,
    private readonly keys: Collection<IdempotencyKeyDocument>,
    /** The journals of durable runs: their expiry moves with their invocation's. */
    private readonly journal: JournalCollections,
    private readonly client: MongoClient,
    private readonly clock: Clock,
    /** The write concern's wtimeout, and how long a request waits for an Idempotency-Key's holder to be confirmed. */
    private readonly majorityWaitMs = MAJORITY_WAIT_MS,
  ) {}

  /**
   * A write that fails is undone before the caller hears of it: one that the majority did not confirm
   * in time (or whose reply was lost) may still be on the primary, and the sweeper would run an
   * invocation its caller was told was not accepted.
   */
  async create(invocation: NewInvocation): Promise<void> {
    assertEntityFits(invocation.entityJson, invocation.rawBody);
    const document = toDocument(invocation);
    try {
      await this.invocations.insertOne(document);
    } catch (error) {
      if (isUnavailable(error)) await this.undoCreate(invocation, null);
      throw error;
    }
  }

  /**
   * The key and the invocation are written in one transaction. Taking the key is an upsert that only
   * matches an expired record: when a live one exists it becomes an insert that the unique index on
   * {botId, key} refuses (E11000), and the transaction stores nothing. The holder is then read like
   * every read, at majority: the primary may hold it before the majority does, and until then it could
   * still be rolled back and the invocation it names could not be read. So the read is repeated until
   * the holder is confirmed (or gone: its request failed, and the key is taken again), as long as a
   * write waits for the majority. A commit that fails is undone like a failed create.
   */
  async createWithKey(invocation: NewInvocation, record: IdempotencyRecord): Promise<IdempotencyRecord | null> {
    assertEntityFits(invocation.entityJson, invocation.rawBody);
    const document = toDocument(invocation);
    const taken = { ...record, expireAt: new Date(record.expireAt) };
    const deadline = Date.now() + this.majorityWaitMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await inTransaction(
          this.client,
          async (session) => {
            await this.keys.updateOne(
              { botId: record.botId, key: record.key, expireAt: { $lte: new Date(record.createdAt) } },
              { $set: taken },
              { upsert: true, session },
            );
            await this.invocations.insertOne(document, { session });
          },
          deadline,
        );
        return null;
      } catch (error) {
        if (!isDuplicateKey(error)) {
          if (isUnavailable(error)) await this.undoCreate(invocation, record);
          throw error;
        }
      }
      const holder = await this.keys.findOne({ botId: record.botId, key: record.key, expireAt: { $gt: new Date(record.createdAt) } });
      if (holder) return toRecord(holder);
      if (Date.now() >= deadline) {
        throw storeUnavailable(new Error(`Idempotency-Key held by a request the replica set did not confirm within ${this.majorityWaitMs} ms`));
      }
      await backoff(attempt);
    }
  }

  /**
   * Removes what a failed create may have left on the primary: the invocation while it is still
   * Queued, and the key record naming it. Acknowledged by the primary alone, like the write it undoes
   * may be; waited for briefly, as the server may be unreachable too.
   */
  private async undoCreate(invocation: NewInvocation, record: IdempotencyRecord | null): Promise<void> {
    const queued = { _id: invocation.id, botId: invocation.botId, status: 'Queued' as const };
    const primaryOnly = { w: 1 } as const;
    const undo = record
      ? inTransaction(
          this.client,
          async (session) => {
            const { deletedCount } = await this.invocations.deleteOne(queued, { session });
            if (deletedCount === 1) await this.keys.deleteOne({ botId: record.botId, key: record.key, invocationId: invocation.id }, { session });
          },
          Date.now() + UNDO_WAIT_MS,
          // The primary's latest data: a transaction reading at majority would not see what it must undo.
          { readConcern: { level: 'local' }, writeConcern: primaryOnly },
        )
      : this.invocations.deleteOne(queued, { writeConcern: primaryOnly });
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, UNDO_WAIT_MS);
    });
    await Promise.race([undo.then(() => undefined, () => undefined), waited]);
    clearTimeout(timer);
  }

  /** The document first, then the batches: a completion in between adds lines the batches lack, never a line twice. */
  async get(ref: InvocationRef): Promise<Invocation | null> {
    const doc = await this.invocations.findOne({ _id: ref.id, botId: ref.botId, expireAt: { $gt: new Date(this.clock.now()) } });
    if (!doc) return null;
    const batches = await this.logBatches
      .find({ botId: ref.botId, invocationId: ref.id }, { projection: { _id: 0, attempt: 1, lines: 1 }, sort: { attempt: 1, seq: 1 } })
      .toArray();
    return toInvocation(doc, batches);
  }

  async getState(ref: InvocationRef): Promise<StoredInvocationState | null> {
    const doc = await this.invocations.findOne(
      { _id: ref.id, botId: ref.botId, expireAt: { $gt: new Date(this.clock.now()) } },
      { projection: STATE_PROJECTION },
    );
    return doc ? toState(doc as StateDocument) : null;
  }

  async claim(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<ClaimedInvocation | null> {
    const doc = await this.invocations.findOneAndUpdate(
      {
        _id: ref.id,
        botId: ref.botId,
        expireAt: { $gt: new Date(now) },
        $or: [{ status: 'Queued' }, { status: 'Running', leaseUntil: { $lt: now } }],
      },
      {
        $set: { status: 'Running', leaseOwner: owner, leaseUntil: now + leaseMs, startedAt: now, progress: null },
        $inc: { attempt: 1 },
      },
      { returnDocument: 'after' },
    );
    // The entity is handed on as the text stored, for the sandbox to parse.
    return doc ? { ...invocationFields(doc, []), entityJson: doc.entity } : null;
  }

  async renewLease(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<boolean> {
    // matchedCount, not modifiedCount: renewing to the same instant is still holding the lease.
    const result = await this.invocations.updateOne(this.leased(ref, owner), { $set: { leaseUntil: now + leaseMs } });
    return result.matchedCount === 1;
  }

  async setProgress(ref: InvocationRef, owner: string, progress: Progress): Promise<void> {
    await this.invocations.updateOne(this.leased(ref, owner), { $set: { progress } });
  }

  /**
   * One transaction: the invocation's batch count goes up while `owner` holds the attempt's lease, and
   * the batch is inserted. Any change of the invocation committed meanwhile (a cancellation, a new
   * claim) conflicts with that increment, so the transaction is retried and then finds the lease gone.
   */
  async appendLogs(ref: InvocationRef, owner: string, batch: LogBatch): Promise<boolean> {
    let held = false;
    try {
      await this.client.withSession((session) =>
        session.withTransaction(async () => {
          const leased = await this.invocations.findOneAndUpdate(
            { ...this.leased(ref, owner), attempt: batch.attempt },
            { $inc: { logBatches: 1 } },
            { projection: { expireAt: 1 }, session },
          );
          held = leased !== null;
          if (!leased) return;
          await this.logBatches.insertOne(
            { _id: `${ref.id}:${batch.attempt}:${batch.seq}`, botId: ref.botId, invocationId: ref.id, attempt: batch.attempt, seq: batch.seq, lines: batch.lines, expireAt: leased.expireAt },
            { session },
          );
        }),
      );
    } catch (error) {
      // Stored before (a retry of a batch whose first write's answer was lost): nothing more to do.
      if (isDuplicateKey(error)) return true;
      throw error;
    }
    return held;
  }

  async watch(ref: InvocationRef): Promise<StoredInvocationState | null> {
    const doc = await this.invocations.findOneAndUpdate(
      { _id: ref.id, botId: ref.botId, expireAt: { $gt: new Date(this.clock.now()) } },
      { $set: { watched: true } },
      { projection: STATE_PROJECTION, returnDocument: 'after' },
    );
    return doc ? toState(doc as StateDocument) : null;
  }

  async complete(ref: InvocationRef, owner: string, outcome: Outcome, logs: LogLine[], now: number): Promise<Completion | null> {
    const recorded = recordedOutcomeJson(outcome, logs);
    // A retryable write: when the reply to a successful update is lost, the retry returns that
    // update's result, so the owner is never told "not recorded" for an outcome that was.
    try {
      const doc = await this.invocations.findOneAndUpdate(
        this.leased(ref, owner),
        finishing({ status: outcome.status, outcome: recorded, logs, finishedAt: now, leaseOwner: null, leaseUntil: null }, now),
        { projection: FINISHED_PROJECTION, returnDocument: 'after' },
      );
      if (doc) await this.finished(ref, doc);
      return doc ? { watched: doc.watched === true } : null;
    } catch (error) {
      // Within the budgets no invocation reaches the server's 16 MiB; should one, it is recorded as a
      // failure that says so rather than tried again on every delivery.
      if (isTooLarge(error)) throw new UnrecordableOutcome(error);
      throw error;
    }
  }

  async giveUp(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Failed', error }, now);
  }

  async cancel(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Cancelled', error }, now);
  }

  /** The update leaves at once; MongoDB offers no synchronous write, so the caller bounds its wait. */
  async quarantine(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Failed', error }, now);
  }

  /** Gives up on or cancels an unfinished invocation, whatever its lease. */
  private async end(ref: InvocationRef, outcome: Exclude<Outcome, { status: 'Completed' }>, now: number): Promise<boolean> {
    const doc = await this.invocations.findOneAndUpdate(
      { _id: ref.id, botId: ref.botId, status: { $in: [...UNFINISHED_STATUSES] }, expireAt: { $gt: new Date(now) } },
      finishing({ status: outcome.status, outcome: outcomeJson(outcome), finishedAt: now, leaseOwner: null, leaseUntil: null }, now),
      { projection: FINISHED_PROJECTION, returnDocument: 'after' },
    );
    if (doc) await this.finished(ref, doc);
    return doc !== null;
  }

  /**
   * After an invocation that ever suspended finished (its expiry now counts from its end): its journal and
   * kept events expire with it. Not in the finishing write's transaction (there is none: it is one
   * retryable single-document write); should this fail, they are deleted at the later expiry they had.
   */
  private async finished(ref: InvocationRef, doc: Pick<InvocationDocument, 'retainMs' | 'expireAt'>): Promise<void> {
    if (doc.retainMs === undefined || doc.retainMs === null) return;
    const mine = { botId: ref.botId, invocationId: ref.id };
    await retriedOnFailover(() => this.journal.entries.updateMany(mine, { $set: { expireAt: doc.expireAt } }));
    await retriedOnFailover(() => this.journal.events.updateMany(mine, { $set: { expireAt: doc.expireAt } }));
  }

  /**
   * One transaction, which writes the invocation's document as an event does (JournalStore.sendEvent):
   * of the two racing, one conflicts and runs again after the other. An event wait that an event
   * completed while the run was still Running (no `waiting` entry of its name is left) is requeued.
   * The first suspension moves the expiry of what the run journalled before with the invocation's.
   */
  async suspend(ref: InvocationRef, lease: { owner: string; attempt: number }, suspension: Suspension, now: number): Promise<'waiting' | 'requeued' | null> {
    const { reason } = suspension;
    const keepUntil = new Date(suspension.keepUntil);
    return this.client.withSession((session) =>
      session.withTransaction(async () => {
        const open =
          reason.kind !== 'event' ||
          (await this.journal.entries.findOne({ botId: ref.botId, invocationId: ref.id, name: reason.name, kind: 'event', status: 'waiting' }, { projection: { _id: 1 }, session })) !== null;
        const literal = (value: unknown) => ({ $literal: value });
        const before = await this.invocations.findOneAndUpdate(
          leasedAttempt(ref, lease),
          [
            {
              $set: {
                status: literal(open ? 'Waiting' : 'Queued'),
                waiting: literal(open ? reason : null),
                publishedAt: open ? '$publishedAt' : literal(now),
                leaseOwner: null,
                leaseUntil: null,
                activeMs: { $add: [{ $ifNull: ['$activeMs', 0] }, literal(suspension.activeMs)] },
                progressAttempt: '$attempt',
                retainMs: { $ifNull: ['$retainMs', { $subtract: [{ $toLong: '$expireAt' }, '$createdAt'] }] },
                expireAt: { $max: ['$expireAt', literal(keepUntil)] },
              },
            },
          ],
          { projection: { expireAt: 1 }, returnDocument: 'before', session },
        );
        if (!before) return null;
        if (before.expireAt < keepUntil) {
          const mine = { botId: ref.botId, invocationId: ref.id, expireAt: { $lt: keepUntil } };
          await this.journal.entries.updateMany(mine, { $set: { expireAt: keepUntil } }, { session });
          await this.journal.events.updateMany(mine, { $set: { expireAt: keepUntil } }, { session });
        }
        return open ? 'waiting' : 'requeued';
      }),
    );
  }

  async wakeDue(now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    // Published by the caller at once: the republish sweep leaves them alone.
    const due: Filter<InvocationDocument> = { status: 'Waiting', 'waiting.until': { $lte: now }, expireAt: { $gt: new Date(now) } };
    const taken = await this.sweep(due, { 'waiting.until': 1 }, { status: 'Queued', waiting: null, publishedAt: now }, limit);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id, pool: doc.pool }));
  }

  async countWaiting(now: number): Promise<number> {
    return this.invocations.countDocuments({ status: 'Waiting', expireAt: { $gt: new Date(now) } });
  }

  async requeueExpiredLeases(before: number): Promise<InvocationRef[]> {
    const expired: Filter<InvocationDocument> = { status: 'Running', leaseUntil: { $lt: before } };
    // A requeued invocation counts as never published, so the next sweep publishes it.
    const taken = await this.sweep(expired, { leaseUntil: 1 }, { status: 'Queued', leaseOwner: null, leaseUntil: null, publishedAt: 0 }, SWEEP_BATCH);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id }));
  }

  async releaseLease(ref: InvocationRef, owner: string): Promise<boolean> {
    const result = await this.invocations.updateOne(this.leased(ref, owner), { $set: { status: 'Queued', leaseOwner: null, leaseUntil: null } });
    return result.matchedCount === 1;
  }

  async releaseLeasesOf(owner: string): Promise<InvocationRef[]> {
    const held: Filter<InvocationDocument> = { status: 'Running', leaseOwner: owner };
    const taken = await this.sweep(held, { leaseUntil: 1 }, { status: 'Queued', leaseOwner: null, leaseUntil: null, publishedAt: 0 }, SWEEP_BATCH);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id }));
  }

  async takeUnpublished(before: number, now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    // Stamping `publishedAt: now` makes a taken invocation stop matching for every sweeper whose
    // `before` is not later than `now`, which is how concurrent sweepers call this.
    const stale: Filter<InvocationDocument> = { status: 'Queued', publishedAt: { $lt: before }, expireAt: { $gt: new Date(now) } };
    const taken = await this.sweep(stale, { publishedAt: 1 }, { publishedAt: now }, limit);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id, pool: doc.pool }));
  }

  async list(botId: string, filter: InvocationListFilter): Promise<InvocationSummary[]> {
    // MongoDB reads a limit of 0 as "no limit".
    if (filter.limit <= 0) return [];
    const query: Filter<InvocationDocument> = { botId, expireAt: { $gt: new Date(this.clock.now()) } };
    if (filter.status) query.status = filter.status;
    if (filter.integrationId) query.integrationId = filter.integrationId;
    if (filter.after) {
      const { createdAt, id } = filter.after;
      query.$or = [{ createdAt: { $lt: createdAt } }, { createdAt, _id: { $gt: id } }];
    }
    const docs = await this.invocations
      .find(query, { projection: SUMMARY_PROJECTION, sort: { createdAt: -1, _id: 1 }, limit: filter.limit })
      .toArray();
    return (docs as SummaryDocument[]).map(toSummary);
  }

  async takeDueCallbacks(now: number, leaseMs: number, limit: number, share?: CallbackShare): Promise<InvocationRef[]> {
    // A callback's due time is empty (null) until its invocation finishes, so the index holds only due ones in range.
    const due: Filter<InvocationDocument> = {
      'callback.state': 'pending',
      'callback.dueAt': { $lte: now },
      status: { $in: ['Completed', 'Failed', 'Cancelled'] },
      expireAt: { $gt: new Date(now) },
    };
    const lease = { 'callback.dueAt': now + leaseMs };
    const taken = share ? await this.sweepIds(due, await this.dueInTurns(due, limit, share), lease) : await this.sweep(due, { 'callback.dueAt': 1 }, lease, limit);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id }));
  }

  /**
   * The ids of up to `limit` due callbacks in turns between bots: each bot's n-th due after every bot's
   * (n-1)-th, none past its share (`perBot` less what the sender has in flight).
   */
  private async dueInTurns(due: Filter<InvocationDocument>, limit: number, share: CallbackShare): Promise<string[]> {
    if (limit <= 0) return [];
    const full = [...share.inFlight].filter(([, n]) => n >= share.perBot).map(([botId]) => botId);
    const groups = await this.invocations
      .aggregate<{ _id: string; ids: string[] }>([
        { $match: full.length > 0 ? { ...due, botId: { $nin: full } } : due },
        { $sort: { 'callback.dueAt': 1 } },
        { $group: { _id: '$botId', ids: { $firstN: { input: '$_id', n: share.perBot } }, first: { $min: '$callback.dueAt' } } },
        { $sort: { first: 1 } },
        { $limit: limit },
      ])
      .toArray();
    const lanes = groups.map((group) => group.ids.slice(0, share.perBot - (share.inFlight.get(group._id) ?? 0)));
    const ids: string[] = [];
    for (let n = 0; ids.length < limit && lanes.some((lane) => lane.length > n); n++) {
      for (const lane of lanes) if (lane.length > n && ids.length < limit) ids.push(lane[n]);
    }
    return ids;
  }

  async recordCallbackAttempt(ref: InvocationRef, attempt: { at: number; error: string | null; nextAttemptAt: number | null }): Promise<void> {
    const state = attempt.error === null ? 'delivered' : attempt.nextAttemptAt === null ? 'failed' : 'pending';
    await this.invocations.updateOne(
      { _id: ref.id, botId: ref.botId, 'callback.state': 'pending' },
      {
        $set: {
          'callback.state': state,
          'callback.dueAt': attempt.nextAttemptAt,
          'callback.error': attempt.error,
          'callback.deliveredAt': attempt.error === null ? attempt.at : null,
        },
        $inc: { 'callback.attempts': 1 },
      },
    );
  }

  async countActive(botId: string, now: number): Promise<ActiveCount> {
    const groups = await this.invocations
      .aggregate<{ _id: string | null; n: number }>([
        { $match: { botId, status: { $in: ['Queued', 'Running'] }, expireAt: { $gt: new Date(now) } } },
        { $group: { _id: '$tokenId', n: { $sum: 1 } } },
      ])
      .toArray();
    const count: ActiveCount = { total: 0, byToken: {} };
    for (const group of groups) {
      count.total += group.n;
      if (typeof group._id === 'string') count.byToken[group._id] = group.n;
    }
    return count;
  }

  async timings(botId: string, since: number, limit: number): Promise<InvocationTiming[]> {
    if (limit <= 0) return [];
    const docs = await this.invocations
      .find(
        { botId, createdAt: { $gte: since }, expireAt: { $gt: new Date(this.clock.now()) } },
        { projection: TIMING_PROJECTION, sort: { createdAt: -1, _id: 1 }, limit },
      )
      .toArray();
    return docs.map(invocationTiming);
  }

  async recentDurations(botId: string, integrationId: string, limit: number): Promise<number[]> {
    if (limit <= 0) return [];
    const docs = await this.invocations
      .find(
        { botId, integrationId, finishedAt: { $ne: null }, startedAt: { $ne: null } },
        { projection: { startedAt: 1, finishedAt: 1 }, sort: { finishedAt: -1 }, limit },
      )
      .toArray();
    return docs.map((doc) => (doc.finishedAt as number) - (doc.startedAt as number));
  }

  async deleteBot(botId: string): Promise<number> {
    // Keys first: no key is left naming an invocation that is gone.
    await retriedOnFailover(() => this.keys.deleteMany({ botId }));
    await retriedOnFailover(() => this.logBatches.deleteMany({ botId }));
    await retriedOnFailover(() => this.journal.entries.deleteMany({ botId }));
    await retriedOnFailover(() => this.journal.events.deleteMany({ botId }));
    return (await retriedOnFailover(() => this.invocations.deleteMany({ botId }))).deletedCount;
  }

  async deleteExpired(now: number): Promise<number> {
    const expired = { $lte: new Date(now) };
    // The TTL monitor deletes expired keys too, about once a minute; this keeps both on the sweep's schedule.
    await retriedOnFailover(() => this.keys.deleteMany({ expireAt: expired }));
    await retriedOnFailover(() => this.logBatches.deleteMany({ expireAt: expired }));
    // A journal's expiry follows its invocation's (moved when it suspends and when it ends).
    await retriedOnFailover(() => this.journal.entries.deleteMany({ expireAt: expired }));
    await retriedOnFailover(() => this.journal.events.deleteMany({ expireAt: expired }));
    // Never an invocation whose run is under way (the TTL index spares it too): its run goes on and
    // records its outcome, and it goes once that is done, or once its lease lapsed (its executor died).
    const unleased = await retriedOnFailover(() => this.invocations.deleteMany({ expireAt: expired, leaseOwner: { $type: 'null' } }));
    const abandoned = await retriedOnFailover(() => this.invocations.deleteMany({ status: 'Running', leaseUntil: { $lt: now }, expireAt: expired }));
    return unleased.deletedCount + abandoned.deletedCount;
  }

  /** The invocation while `owner` holds its lease. */
  private leased(ref: InvocationRef, owner: string): Filter<InvocationDocument> {
    return { _id: ref.id, botId: ref.botId, status: 'Running', leaseOwner: owner };
  }

  /**
   * Moves up to `limit` invocations matching `filter` (first in `order`, the key of the index that
   * finds them, so the server neither reads nor sorts more than `limit` documents) with `changes`,
   * and returns exactly the ones this call moved, in that order. The update re-checks the filter per
   * document, atomically, and `changes` make a document stop matching, so when sweepers race each
   * invocation is moved by one of them; the token it stamps tells this call which ones were its own.
   */
  private async sweep(
    filter: Filter<InvocationDocument>,
    order: Sort,
    changes: MatchKeysAndValues<InvocationDocument>,
    limit: number,
  ): Promise<Array<Pick<InvocationDocument, '_id' | 'botId' | 'pool'>>> {
    if (limit <= 0) return [];
    const candidates = await this.invocations.find(filter, { projection: { _id: 1 }, sort: order, limit }).toArray();
    return this.sweepIds(
      filter,
      candidates.map((doc) => doc._id),
      changes,
    );
  }

  /** The second half of `sweep`, for candidates chosen otherwise: moves those of `ids` that still match `filter`, in that order. */
  private async sweepIds(
    filter: Filter<InvocationDocument>,
    ids: string[],
    changes: MatchKeysAndValues<InvocationDocument>,
  ): Promise<Array<Pick<InvocationDocument, '_id' | 'botId' | 'pool'>>> {
    if (ids.length === 0) return [];
    const sweepToken = randomUUID();
    // Not a retryable write (it may touch many documents): sent again after a failover, it moves those the first try left.
    await retriedOnFailover(() => this.invocations.updateMany({ ...filter, _id: { $in: ids } }, { $set: { ...changes, sweepToken } }));
    // Only this call wrote this token, and its own acknowledged write is visible on the primary without
    // waiting for the majority snapshot.
    const taken = await this.invocations
      .find({ _id: { $in: ids }, sweepToken }, { projection: { _id: 1, botId: 1, pool: 1 }, readConcern: { level: 'local' } })
      .toArray();
    const position = new Map(ids.map((id, index) => [id, index]));
    return (taken as Array<Pick<InvocationDocument, '_id' | 'botId' | 'pool'>>).sort((a, b) => (position.get(a._id) ?? 0) - (position.get(b._id) ?? 0));
  }
}

/** What a finishing write returns: whether others wait, and the expiry an invocation that suspended now has. */
const FINISHED_PROJECTION = { watched: 1, retainMs: 1, expireAt: 1 } as const;

/**
 * The update that finishes an invocation: `fields` as given, each a literal (caller data is never read
 * as an expression), it waits for nothing, and a pending callback falls due now. One that ever suspended
 * expires its TTL as created after its end; any other keeps its expiry as it is (an unchanged key: no
 * index write). A pipeline, so the callback and the expiry are touched only where that applies, in the
 * same atomic write.
 */
function finishing(fields: Record<string, unknown>, now: number): Document[] {
  const literals = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, { $literal: value }]));
  const callback = { $cond: [{ $eq: ['$callback.state', 'pending'] }, { $mergeObjects: ['$callback', { dueAt: now }] }, '$callback'] };
  const expireAt = { $cond: [{ $gt: ['$retainMs', null] }, { $add: [{ $literal: new Date(now) }, '$retainMs'] }, '$expireAt'] };
  return [{ $set: { ...literals, waiting: null, callback, expireAt } }];
}

function toRecord(doc: IdempotencyKeyDocument): IdempotencyRecord {
  return {
    botId: doc.botId,
    key: doc.key,
    fingerprint: doc.fingerprint,
    invocationId: doc.invocationId,
    createdAt: doc.createdAt,
    expireAt: doc.expireAt.getTime(),
  };
}

function toDocument(invocation: NewInvocation): InvocationDocument {
  const span = rawBodySpan(invocation.entityJson, invocation.rawBody);
  return {
    _id: invocation.id,
    botId: invocation.botId,
    tokenId: invocation.tokenId,
    entityName: invocation.entityName,
    integrationId: invocation.integrationId,
    integrationVersion: invocation.integrationVersion,
    pool: invocation.pool,
    mode: invocation.mode,
    endpoint: invocation.endpoint,
    responseContentType: invocation.responseContentType,
    entity: invocation.entityJson,
    rawBody: span ? null : invocation.rawBody,
    ...(span ? { rawBodySpan: [span[0], span[1]] } : {}),
    ...(invocation.inbound ? { inbound: { scheme: invocation.inbound.scheme, deliveryId: invocation.inbound.deliveryId } } : {}),
    status: 'Queued',
    attempt: 0,
    leaseOwner: null,
    leaseUntil: null,
    createdAt: invocation.createdAt,
    startedAt: null,
    finishedAt: null,
    publishedAt: invocation.createdAt,
    expireAt: new Date(invocation.expireAt),
    outcome: null,
    logs: [],
    progress: null,
    callback: callbackDocument(pendingCallback(invocation.callbackUrl)),
  };
}

/** The outcome a document keeps as JSON text. */
const outcomeOf = (doc: Pick<InvocationDocument, 'outcome'>): Outcome | null => (doc.outcome ? (JSON.parse(doc.outcome) as Outcome) : null);

/** A durable run's fields, absent on a document that never journalled nor suspended. */
const waitingOf = (doc: Pick<InvocationDocument, 'waiting'>) => doc.waiting ?? null;
const stepsOf = (doc: Pick<InvocationDocument, 'steps'>) => doc.steps ?? 0;

const toState = (doc: StateDocument): StoredInvocationState => invocationState({ ...doc, id: doc._id, outcome: outcomeOf(doc), waiting: waitingOf(doc), steps: stepsOf(doc) });

const toSummary = (doc: SummaryDocument): InvocationSummary => invocationSummary({ ...doc, id: doc._id, outcome: outcomeOf(doc) });

/** Every line in order (linesInOrder): the batches appended while the attempts ran, then the rest the last one recorded. */
const logsOf = (batches: Array<Pick<LogBatchDocument, 'attempt' | 'lines'>>, doc: Pick<InvocationDocument, 'logs' | 'attempt'>): StoredLogLine[] =>
  linesInOrder(batches, { attempt: doc.attempt, lines: doc.logs });

function toInvocation(doc: InvocationDocument, batches: Array<Pick<LogBatchDocument, 'attempt' | 'lines'>>): Invocation {
  return { ...invocationFields(doc, batches), entity: JSON.parse(doc.entity) };
}

/** Every field of the invocation but its entity. */
function invocationFields(doc: InvocationDocument, batches: Array<Pick<LogBatchDocument, 'attempt' | 'lines'>>): Omit<Invocation, 'entity'> {
  const { error: _error, ...summary } = toSummary(doc);
  return {
    ...summary,
    tokenId: doc.tokenId ?? null,
    pool: doc.pool,
    endpoint: doc.endpoint,
    responseContentType: doc.responseContentType,
    rawBody: rawBodyOf(doc.entity, doc.rawBody ?? null, doc.rawBodySpan),
    inbound: doc.inbound ?? null,
    leaseOwner: doc.leaseOwner,
    leaseUntil: doc.leaseUntil,
    expireAt: doc.expireAt.getTime(),
    outcome: outcomeOf(doc),
    logs: logsOf(batches, doc),
    progress: doc.progress,
    callback: doc.callback ? callbackOf(doc.callback) : null,
    waiting: waitingOf(doc),
    steps: stepsOf(doc),
    activeMs: doc.activeMs ?? 0,
    progressAttempt: doc.progressAttempt ?? 0,
  };
}

/** A callback as the document holds it: `dueAt` is its next attempt's time, `error` its last error. */
function callbackDocument(callback: CallbackDelivery | null): CallbackDocument | null {
  if (!callback) return null;
  return { url: callback.url, state: callback.state, attempts: callback.attempts, dueAt: callback.nextAttemptAt, error: callback.lastError, deliveredAt: callback.deliveredAt };
}

function callbackOf(doc: CallbackDocument): CallbackDelivery {
  return {
    url: doc.url,
    state: doc.state,
    attempts: doc.attempts,
    nextAttemptAt: doc.state === 'pending' && doc.dueAt ? doc.dueAt : null,
    lastError: doc.error,
    deliveredAt: doc.deliveredAt,
  };
}
