import type { ClientSession, Collection, Filter, MongoClient } from 'mongodb';
import type { EventDelivery, InvocationRef, JournalEntry, JournalLease, JournalLimits, JournalStore, StepRecord, StepSummary, WaitRecord } from '@gi/domain';
import { isSettledForRecord, journalBytesOf, journalLimitPassed, resultBytesWithin, stepEntry, TIMED_OUT_RESULT_JSON, UNFINISHED_STATUSES, waitEntry } from '@gi/domain';
import type { InvocationDocument, JournalEntryDocument, KeptEventDocument } from './mongo-documents';

/** The collections beside the invocations that hold durable runs' journals. */
export interface JournalCollections {
  entries: Collection<JournalEntryDocument>;
  events: Collection<KeptEventDocument>;
}

/** An entry's fields as listings read them: no result. */
const SUMMARY_PROJECTION = { _id: 0, name: 1, occurrence: 1, kind: 1, status: 1, resultBytes: 1, error: 1, attempts: 1, startedAt: 1, finishedAt: 1, until: 1 } as const;
const ENTRY_PROJECTION = { ...SUMMARY_PROJECTION, result: 1 } as const;
/** What a journal write reads of its invocation as it updates it: the counters it checks, the expiry its documents get. */
const USAGE_PROJECTION = { steps: 1, journalBytes: 1, eventSeq: 1, expireAt: 1, status: 1, pool: 1 } as const;
type UsageDocument = Pick<InvocationDocument, '_id' | keyof typeof USAGE_PROJECTION>;

/** The invocation while the run at `lease.attempt` holds its lease. */
export const leasedAttempt = (ref: InvocationRef, lease: JournalLease): Filter<InvocationDocument> => ({
  _id: ref.id,
  botId: ref.botId,
  status: 'Running',
  leaseOwner: lease.owner,
  attempt: lease.attempt,
});

const stepKey = (ref: InvocationRef, step: Pick<JournalEntry, 'name' | 'occurrence'>) => ({ botId: ref.botId, invocationId: ref.id, name: step.name, occurrence: step.occurrence });

/**
 * The journals of durable runs in MongoDB (`invocationJournal`, `invocationEvents`). Every write is one
 * transaction that also writes the invocation's document: the lease checked and the counters grown
 * (so the limits need no count of the journal), and any change of the invocation committed meanwhile
 * (a cancellation, another claim, a suspension, an event) conflicts with it, so the transaction runs
 * again and sees it. A write refused by a limit throws inside its transaction, which is aborted:
 * nothing is written.
 */
export class MongoJournalStore implements JournalStore {
  constructor(
    private readonly invocations: Collection<InvocationDocument>,
    private readonly journal: JournalCollections,
    private readonly client: MongoClient,
  ) {}

  private transaction<T>(work: (session: ClientSession) => Promise<T>): Promise<T> {
    return this.client.withSession((session) => session.withTransaction(() => work(session)));
  }

  async read(ref: InvocationRef): Promise<JournalEntry[]> {
    const docs = await this.journal.entries.find({ botId: ref.botId, invocationId: ref.id }, { projection: ENTRY_PROJECTION, sort: { seq: 1 } }).toArray();
    return docs.map(toEntry);
  }

  async list(ref: InvocationRef, options: { limit: number; before?: Pick<JournalEntry, 'name' | 'occurrence'> }): Promise<StepSummary[]> {
    // MongoDB reads a limit of 0 as "no limit".
    if (options.limit <= 0) return [];
    const filter: Filter<JournalEntryDocument> = { botId: ref.botId, invocationId: ref.id };
    if (options.before) {
      const before = await this.journal.entries.findOne(stepKey(ref, options.before), { projection: { seq: 1 } });
      if (!before) return [];
      filter.seq = { $lt: before.seq };
    }
    const docs = await this.journal.entries.find(filter, { projection: SUMMARY_PROJECTION, sort: { seq: -1 }, limit: options.limit }).toArray();
    return docs.map(toStepSummary);
  }

  async record(ref: InvocationRef, lease: JournalLease, step: StepRecord, limits: JournalLimits): Promise<JournalEntry | null> {
    const resultBytes = step.status === 'done' ? resultBytesWithin(step.resultJson, limits, 'result') : 0;
    return this.transaction(async (session) => {
      const stored = await this.journal.entries.findOne(stepKey(ref, step), { projection: ENTRY_PROJECTION, session });
      const existing = stored && toEntry(stored);
      if (existing && isSettledForRecord(existing)) return (await this.leaseHeld(ref, lease, session)) ? existing : null;
      const entry = stepEntry(step, existing?.startedAt);
      const growth = { steps: existing ? 0 : 1, journalBytes: journalBytesOf(entry) - (existing ? journalBytesOf(existing) : 0) };
      const invocation = await this.grow(ref, lease, growth, limits, session);
      if (!invocation) return null;
      const fields = { status: entry.status, result: entry.resultJson, resultBytes, error: entry.error, attempts: entry.attempts, finishedAt: entry.finishedAt, until: entry.until };
      if (existing) await this.journal.entries.updateOne(stepKey(ref, step), { $set: fields }, { session });
      else await this.journal.entries.insertOne(this.newEntry(ref, invocation, entry, resultBytes), { session });
      return entry;
    });
  }

  async beginWait(ref: InvocationRef, lease: JournalLease, wait: WaitRecord, limits: JournalLimits): Promise<JournalEntry | null> {
    return this.transaction(async (session) => {
      const stored = await this.journal.entries.findOne(stepKey(ref, wait), { projection: ENTRY_PROJECTION, session });
      if (stored) return (await this.leaseHeld(ref, lease, session)) ? toEntry(stored) : null;
      const invocation = await this.grow(ref, lease, { steps: 1, journalBytes: 0 }, limits, session);
      if (!invocation) return null;
      // A kept event moves into the entry: the journal's size stays, and it is kept no more.
      const kept =
        wait.kind === 'event'
          ? await this.journal.events.findOneAndDelete({ botId: ref.botId, invocationId: ref.id, name: wait.name }, { sort: { seq: 1 }, projection: { payload: 1 }, session })
          : null;
      const entry = waitEntry(wait, kept?.payload ?? null);
      await this.journal.entries.insertOne(this.newEntry(ref, invocation, entry, kept ? Buffer.byteLength(kept.payload) : 0), { session });
      return entry;
    });
  }

  async timeOut(ref: InvocationRef, lease: JournalLease, step: Pick<JournalEntry, 'name' | 'occurrence'>, now: number): Promise<JournalEntry | null> {
    const bytes = Buffer.byteLength(TIMED_OUT_RESULT_JSON);
    return this.transaction(async (session) => {
      if (!(await this.leaseHeld(ref, lease, session))) return null;
      const timedOut = await this.journal.entries.updateOne(
        { ...stepKey(ref, step), kind: 'event', status: 'waiting', until: { $lte: now } },
        { $set: { status: 'done', result: TIMED_OUT_RESULT_JSON, resultBytes: bytes, finishedAt: now, until: null } },
        { session },
      );
      // A result this small is never refused: a run whose wait timed out must be able to go on. The write
      // to the invocation makes a cancellation or a new claim committed meanwhile conflict with this one.
      if (timedOut.modifiedCount === 1) await this.invocations.updateOne(leasedAttempt(ref, lease), { $inc: { journalBytes: bytes } }, { session });
      const stored = await this.journal.entries.findOne(stepKey(ref, step), { projection: ENTRY_PROJECTION, session });
      if (!stored) throw new Error(`The journal has no wait '${step.name}' (occurrence ${step.occurrence}) to time out.`);
      return toEntry(stored);
    });
  }

  /**
   * One transaction that writes the invocation's document first, whatever becomes of the event. A
   * suspension (InvocationStore.suspend) writes it too: under snapshot isolation two transactions that
   * only read what the other writes could both commit unseen by each other (the event finding the
   * invocation Running, the suspension finding the wait still open: a lost wake-up). Writing the same
   * document, one of them conflicts and runs again after the other, and sees it.
   */
  async sendEvent(ref: InvocationRef, event: { name: string; payloadJson: string; at: number }, limits: JournalLimits): Promise<EventDelivery | null> {
    const bytes = resultBytesWithin(event.payloadJson, limits, 'payload');
    return this.transaction(async (session): Promise<EventDelivery | null> => {
      const invocation = (await this.invocations.findOneAndUpdate(
        { _id: ref.id, botId: ref.botId, status: { $in: [...UNFINISHED_STATUSES] }, expireAt: { $gt: new Date(event.at) } },
        { $inc: { journalBytes: bytes, eventSeq: 1 } },
        { projection: USAGE_PROJECTION, returnDocument: 'before', session },
      )) as UsageDocument | null;
      if (!invocation) return null;
      const wait = await this.journal.entries.findOne(
        { botId: ref.botId, invocationId: ref.id, name: event.name, kind: 'event', status: 'waiting', until: { $gt: event.at } },
        { sort: { occurrence: 1 }, projection: { occurrence: 1 }, session },
      );
      const keptEvents = wait ? 0 : await this.journal.events.countDocuments({ botId: ref.botId, invocationId: ref.id }, { session });
      const refused = journalLimitPassed(usageOf(invocation, keptEvents), { journalBytes: bytes, keptEvents: wait ? 0 : 1 }, limits);
      if (refused) throw refused;
      if (!wait) {
        const kept = { botId: ref.botId, invocationId: ref.id, name: event.name, seq: (invocation.eventSeq ?? 0) + 1, payload: event.payloadJson, sentAt: event.at, expireAt: invocation.expireAt };
        await this.journal.events.insertOne(kept, { session });
        return { delivered: 'kept' };
      }
      await this.journal.entries.updateOne(
        { ...stepKey(ref, { name: event.name, occurrence: wait.occurrence }), status: 'waiting' },
        { $set: { status: 'done', result: event.payloadJson, resultBytes: bytes, finishedAt: event.at, until: null } },
        { session },
      );
      if (invocation.status !== 'Waiting') return { delivered: 'taken' };
      // Published by the sender at once: the republish sweep leaves it alone.
      await this.invocations.updateOne({ _id: ref.id, botId: ref.botId, status: 'Waiting' }, { $set: { status: 'Queued', waiting: null, publishedAt: event.at } }, { session });
      return { delivered: 'resumed', pool: invocation.pool };
    });
  }

  private async leaseHeld(ref: InvocationRef, lease: JournalLease, session: ClientSession): Promise<boolean> {
    return (await this.invocations.findOne(leasedAttempt(ref, lease), { projection: { _id: 1 }, session })) !== null;
  }

  /** Grows the journal's counters under the lease, as the attempt's progress; null when the lease is not held, thrown past a limit (the transaction is then aborted). */
  private async grow(ref: InvocationRef, lease: JournalLease, growth: { steps: number; journalBytes: number }, limits: JournalLimits, session: ClientSession): Promise<UsageDocument | null> {
    const invocation = (await this.invocations.findOneAndUpdate(
      leasedAttempt(ref, lease),
      { $inc: { steps: growth.steps, journalBytes: growth.journalBytes }, $set: { progressAttempt: lease.attempt } },
      { projection: USAGE_PROJECTION, returnDocument: 'before', session },
    )) as UsageDocument | null;
    if (!invocation) return null;
    const refused = journalLimitPassed(usageOf(invocation, 0), growth, limits);
    if (refused) throw refused;
    return invocation;
  }

  /** A new entry: next in the invocation's order, expiring with it. */
  private newEntry(ref: InvocationRef, invocation: UsageDocument, entry: JournalEntry, resultBytes: number): JournalEntryDocument {
    return {
      botId: ref.botId,
      invocationId: ref.id,
      name: entry.name,
      occurrence: entry.occurrence,
      seq: (invocation.steps ?? 0) + 1,
      kind: entry.kind,
      status: entry.status,
      result: entry.resultJson,
      resultBytes,
      error: entry.error,
      attempts: entry.attempts,
      startedAt: entry.startedAt,
      finishedAt: entry.finishedAt,
      until: entry.until,
      expireAt: invocation.expireAt,
    };
  }
}

const usageOf = (invocation: UsageDocument, keptEvents: number) => ({ steps: invocation.steps ?? 0, journalBytes: invocation.journalBytes ?? 0, keptEvents });

type StoredEntry = Pick<JournalEntryDocument, 'name' | 'occurrence' | 'kind' | 'status' | 'resultBytes' | 'error' | 'attempts' | 'startedAt' | 'finishedAt' | 'until'> & { result?: string | null };

function toEntry(doc: StoredEntry): JournalEntry {
  return {
    name: doc.name,
    occurrence: doc.occurrence,
    kind: doc.kind,
    status: doc.status,
    resultJson: doc.result ?? null,
    error: doc.error,
    attempts: doc.attempts,
    startedAt: doc.startedAt,
    finishedAt: doc.finishedAt,
    until: doc.until,
  };
}

function toStepSummary(doc: StoredEntry): StepSummary {
  const { resultJson: _result, ...entry } = toEntry(doc);
  return { ...entry, resultBytes: doc.resultBytes };
}
