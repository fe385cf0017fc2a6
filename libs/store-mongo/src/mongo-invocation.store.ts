import { randomUUID } from 'node:crypto';
import type { Collection, Filter, MatchKeysAndValues, MongoClient } from 'mongodb';
import type {
  ActiveCount,
  CallbackDelivery,
  Clock,
  IdempotencyRecord,
  Invocation,
  InvocationError,
  InvocationListFilter,
  InvocationRef,
  InvocationState,
  InvocationStore,
  InvocationSummary,
  InvocationTiming,
  LogLine,
  NewInvocation,
  Outcome,
  Progress,
} from '@gi/domain';
import { outcomeError } from '@gi/domain';
import type { CallbackDocument, IdempotencyKeyDocument, InvocationDocument } from './mongo-documents';
import { isDuplicateKey } from './mongo-errors';

/** The most invocations one sweep call moves; the next round takes the rest. */
const SWEEP_BATCH = 10_000;
/** Tries to take an Idempotency-Key whose holder expired while it was read; one more is never needed in practice. */
const KEY_TRIES = 3;

const SUMMARY_PROJECTION = {
  _id: 1,
  botId: 1,
  entityName: 1,
  integrationId: 1,
  integrationVersion: 1,
  mode: 1,
  status: 1,
  attempt: 1,
  createdAt: 1,
  startedAt: 1,
  finishedAt: 1,
  outcome: 1,
} as const;

type SummaryDocument = Pick<InvocationDocument, keyof typeof SUMMARY_PROJECTION>;

/** The state alone: the server sends neither the entity nor the logs. */
const STATE_PROJECTION = {
  _id: 1,
  botId: 1,
  integrationId: 1,
  status: 1,
  attempt: 1,
  startedAt: 1,
  finishedAt: 1,
  progress: 1,
  outcome: 1,
  responseContentType: 1,
} as const;

type StateDocument = Pick<InvocationDocument, keyof typeof STATE_PROJECTION>;

/**
 * Invocations in MongoDB. Every query by reference carries the bot id next to the invocation id, so
 * one bot can never reach another's invocation. Each state change is one conditional single-document
 * update, which the server applies atomically: of several claimers exactly one matches.
 */
export class MongoInvocationStore implements InvocationStore {
  constructor(
    private readonly invocations: Collection<InvocationDocument>,
    private readonly keys: Collection<IdempotencyKeyDocument>,
    private readonly client: MongoClient,
    private readonly clock: Clock,
  ) {}

  async create(invocation: NewInvocation): Promise<void> {
    await this.invocations.insertOne(toDocument(invocation));
  }

  /**
   * The key and the invocation are written in one transaction. Taking the key is an upsert that only
   * matches an expired record: when a live one exists it becomes an insert that the unique index on
   * {botId, key} refuses (E11000), and the transaction stores nothing; the holder is then read back.
   */
  async createWithKey(invocation: NewInvocation, record: IdempotencyRecord): Promise<IdempotencyRecord | null> {
    const taken = { ...record, expireAt: new Date(record.expireAt) };
    for (let attempt = 1; ; attempt++) {
      try {
        await this.client.withSession((session) =>
          session.withTransaction(async () => {
            await this.keys.updateOne(
              { botId: record.botId, key: record.key, expireAt: { $lte: new Date(record.createdAt) } },
              { $set: taken },
              { upsert: true, session },
            );
            await this.invocations.insertOne(toDocument(invocation), { session });
          }),
        );
        return null;
      } catch (error) {
        if (!isDuplicateKey(error) || attempt >= KEY_TRIES) throw error;
      }
      // The primary's own view: the transaction that took the key has committed there.
      const holder = await this.keys.findOne(
        { botId: record.botId, key: record.key, expireAt: { $gt: new Date(record.createdAt) } },
        { readConcern: { level: 'local' } },
      );
      if (holder) {
        return {
          botId: holder.botId,
          key: holder.key,
          fingerprint: holder.fingerprint,
          invocationId: holder.invocationId,
          createdAt: holder.createdAt,
          expireAt: holder.expireAt.getTime(),
        };
      }
    }
  }

  async get(ref: InvocationRef): Promise<Invocation | null> {
    const doc = await this.invocations.findOne({ _id: ref.id, botId: ref.botId, expireAt: { $gt: new Date(this.clock.now()) } });
    return doc ? toInvocation(doc) : null;
  }

  async getState(ref: InvocationRef): Promise<InvocationState | null> {
    const doc = await this.invocations.findOne(
      { _id: ref.id, botId: ref.botId, expireAt: { $gt: new Date(this.clock.now()) } },
      { projection: STATE_PROJECTION },
    );
    return doc ? toState(doc as StateDocument) : null;
  }

  async claim(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<Invocation | null> {
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
    return doc ? toInvocation(doc) : null;
  }

  async renewLease(ref: InvocationRef, owner: string, leaseMs: number, now: number): Promise<boolean> {
    // matchedCount, not modifiedCount: renewing to the same instant is still holding the lease.
    const result = await this.invocations.updateOne(this.leased(ref, owner), { $set: { leaseUntil: now + leaseMs } });
    return result.matchedCount === 1;
  }

  async setProgress(ref: InvocationRef, owner: string, progress: Progress): Promise<void> {
    await this.invocations.updateOne(this.leased(ref, owner), { $set: { progress } });
  }

  async complete(ref: InvocationRef, owner: string, outcome: Outcome, logs: LogLine[], now: number): Promise<boolean> {
    // A retryable write: when the reply to a successful update is lost, the retry returns that
    // update's result, so the owner is never told "not recorded" for an outcome that was.
    const result = await this.invocations.updateOne(this.leased(ref, owner), {
      $set: { status: outcome.status, outcome: JSON.stringify(outcome), logs, finishedAt: now, leaseOwner: null, leaseUntil: null },
    });
    return result.matchedCount === 1;
  }

  async giveUp(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Failed', error }, now);
  }

  async cancel(ref: InvocationRef, error: InvocationError, now: number): Promise<boolean> {
    return this.end(ref, { status: 'Cancelled', error }, now);
  }

  /** Gives up on or cancels an unfinished invocation, whatever its lease. */
  private async end(ref: InvocationRef, outcome: Exclude<Outcome, { status: 'Completed' }>, now: number): Promise<boolean> {
    const result = await this.invocations.updateOne(
      { _id: ref.id, botId: ref.botId, status: { $in: ['Queued', 'Running'] }, expireAt: { $gt: new Date(now) } },
      { $set: { status: outcome.status, outcome: JSON.stringify(outcome), finishedAt: now, leaseOwner: null, leaseUntil: null } },
    );
    return result.matchedCount === 1;
  }

  async requeueExpiredLeases(before: number): Promise<InvocationRef[]> {
    const expired: Filter<InvocationDocument> = { status: 'Running', leaseUntil: { $lt: before } };
    // A requeued invocation counts as never published, so the next sweep publishes it.
    const taken = await this.sweep(expired, { status: 'Queued', leaseOwner: null, leaseUntil: null, publishedAt: 0 }, SWEEP_BATCH);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id }));
  }

  async takeUnpublished(before: number, now: number, limit: number): Promise<Array<InvocationRef & { pool: string }>> {
    // Stamping `publishedAt: now` makes a taken invocation stop matching for every sweeper whose
    // `before` is not later than `now`, which is how concurrent sweepers call this.
    const stale: Filter<InvocationDocument> = { status: 'Queued', publishedAt: { $lt: before }, expireAt: { $gt: new Date(now) } };
    const taken = await this.sweep(stale, { publishedAt: now }, limit);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id, pool: doc.pool }));
  }

  async list(botId: string, filter: InvocationListFilter): Promise<InvocationSummary[]> {
    // MongoDB reads a limit of 0 as "no limit".
    if (filter.limit <= 0) return [];
    const query: Filter<InvocationDocument> = { botId, expireAt: { $gt: new Date(this.clock.now()) } };
    if (filter.status) query.status = filter.status;
    if (filter.integrationId) query.integrationId = filter.integrationId;
    const docs = await this.invocations
      .find(query, { projection: SUMMARY_PROJECTION, sort: { createdAt: -1, _id: 1 }, limit: filter.limit })
      .toArray();
    return (docs as SummaryDocument[]).map(toSummary);
  }

  async takeDueCallbacks(now: number, leaseMs: number, limit: number): Promise<InvocationRef[]> {
    const due: Filter<InvocationDocument> = {
      'callback.state': 'pending',
      'callback.dueAt': { $lte: now },
      status: { $in: ['Completed', 'Failed', 'Cancelled'] },
      expireAt: { $gt: new Date(now) },
    };
    const taken = await this.sweep(due, { 'callback.dueAt': now + leaseMs }, limit);
    return taken.map((doc) => ({ botId: doc.botId, id: doc._id }));
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
        { projection: { _id: 0, integrationId: 1, status: 1, createdAt: 1, startedAt: 1, finishedAt: 1 }, sort: { createdAt: -1, _id: 1 }, limit },
      )
      .toArray();
    return docs.map((doc) => ({
      integrationId: doc.integrationId,
      status: doc.status,
      createdAt: doc.createdAt,
      startedAt: doc.startedAt,
      finishedAt: doc.finishedAt,
    }));
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

  async deleteExpired(now: number): Promise<number> {
    // The TTL monitor deletes expired keys too, about once a minute; this keeps both on the sweep's schedule.
    await this.keys.deleteMany({ expireAt: { $lte: new Date(now) } });
    const result = await this.invocations.deleteMany({ expireAt: { $lte: new Date(now) } });
    return result.deletedCount;
  }

  /** The invocation while `owner` holds its lease. */
  private leased(ref: InvocationRef, owner: string): Filter<InvocationDocument> {
    return { _id: ref.id, botId: ref.botId, status: 'Running', leaseOwner: owner };
  }

  /**
   * Moves up to `limit` invocations matching `filter` (oldest first) with `changes`, and returns
   * exactly the ones this call moved. The update re-checks the filter per document, atomically, and
   * `changes` make a document stop matching, so when sweepers race each invocation is moved by one
   * of them; the token it stamps tells this call which ones were its own.
   */
  private async sweep(
    filter: Filter<InvocationDocument>,
    changes: MatchKeysAndValues<InvocationDocument>,
    limit: number,
  ): Promise<Array<Pick<InvocationDocument, '_id' | 'botId' | 'pool'>>> {
    if (limit <= 0) return [];
    const candidates = await this.invocations
      .find(filter, { projection: { _id: 1 }, sort: { createdAt: 1, _id: 1 }, limit })
      .toArray();
    if (candidates.length === 0) return [];
    const ids = candidates.map((doc) => doc._id);
    const sweepToken = randomUUID();
    await this.invocations.updateMany({ ...filter, _id: { $in: ids } }, { $set: { ...changes, sweepToken } });
    // Only this call wrote this token, and its own acknowledged write is visible on the primary without
    // waiting for the majority snapshot.
    const taken = await this.invocations
      .find(
        { _id: { $in: ids }, sweepToken },
        { projection: { _id: 1, botId: 1, pool: 1 }, sort: { createdAt: 1, _id: 1 }, readConcern: { level: 'local' } },
      )
      .toArray();
    return taken as Array<Pick<InvocationDocument, '_id' | 'botId' | 'pool'>>;
  }
}

function toDocument(invocation: NewInvocation): InvocationDocument {
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
    entity: JSON.stringify(invocation.entity),
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
    callback: invocation.callbackUrl === null ? null : { url: invocation.callbackUrl, state: 'pending', attempts: 0, dueAt: 0, error: null, deliveredAt: null },
  };
}

function toState(doc: StateDocument): InvocationState {
  return {
    id: doc._id,
    botId: doc.botId,
    integrationId: doc.integrationId,
    status: doc.status,
    attempt: doc.attempt,
    startedAt: doc.startedAt,
    finishedAt: doc.finishedAt,
    progress: doc.progress,
    outcome: doc.outcome ? (JSON.parse(doc.outcome) as Outcome) : null,
    responseContentType: doc.responseContentType,
  };
}

function toSummary(doc: SummaryDocument): InvocationSummary {
  const outcome = doc.outcome ? (JSON.parse(doc.outcome) as Outcome) : null;
  return {
    id: doc._id,
    botId: doc.botId,
    entityName: doc.entityName,
    integrationId: doc.integrationId,
    integrationVersion: doc.integrationVersion,
    mode: doc.mode,
    status: doc.status,
    attempt: doc.attempt,
    createdAt: doc.createdAt,
    startedAt: doc.startedAt,
    finishedAt: doc.finishedAt,
    error: outcomeError(outcome),
  };
}

function toInvocation(doc: InvocationDocument): Invocation {
  const { error: _error, ...summary } = toSummary(doc);
  return {
    ...summary,
    tokenId: doc.tokenId ?? null,
    pool: doc.pool,
    endpoint: doc.endpoint,
    responseContentType: doc.responseContentType,
    entity: JSON.parse(doc.entity),
    leaseOwner: doc.leaseOwner,
    leaseUntil: doc.leaseUntil,
    expireAt: doc.expireAt.getTime(),
    outcome: doc.outcome ? (JSON.parse(doc.outcome) as Outcome) : null,
    logs: doc.logs,
    progress: doc.progress,
    callback: doc.callback ? callbackOf(doc.callback) : null,
  };
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
