import type { Document } from 'mongodb';
import { DEFAULT_JOURNAL_LIMITS, JournalLimitExceeded } from '@gi/domain';
import type { Store } from '@gi/domain';
import { createMongoStore } from '@gi/store-mongo';
import { cursorReply, FakeMongod } from './fake-mongod.fixture';

/**
 * What the MongoDB journal of durable runs puts on the wire, recorded by a stand-in server (no MongoDB
 * runs here; the store contract runs the behaviour against a real one when MONGO_URL is set): each
 * write is one transaction with a write of its invocation, committed with majority write concern.
 */
describe('MongoDB journal on the wire', () => {
  const now = Date.UTC(2026, 0, 1);
  const ref = { botId: 'bot-a', id: 'inv-1' };
  const lease = { owner: 'w1', attempt: 3 };
  const expireAt = new Date(now + 3600_000);
  const limits = DEFAULT_JOURNAL_LIMITS;
  let fake: FakeMongod;
  let store: Store;

  beforeEach(async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000, clock: { now: () => now } });
    fake.commands.length = 0;
  });
  afterEach(async () => {
    await store.close();
    await fake.stop();
  });

  /** Answers the invocation's conditional update with `value` (as it was before the update). */
  const invocationIs = (value: Document | null) =>
    fake.answer('findAndModify', (command) =>
      command.findAndModify === 'invocations' ? { lastErrorObject: { n: value ? 1 : 0, updatedExisting: value !== null }, value, ok: 1 } : { value: null, ok: 1 },
    );
  const running = { _id: 'inv-1', botId: 'bot-a', status: 'Running', pool: 'bulk', steps: 4, journalBytes: 100, eventSeq: 2, expireAt };
  /** The commands of one transaction: the same session and transaction number. */
  const inTransactionOf = (first: Document) => fake.commands.filter((command) => command.txnNumber !== undefined && command.lsid?.id?.equals?.(first.lsid.id) && String(command.txnNumber) === String(first.txnNumber));
  const commandNames = (commands: Document[]) => commands.map((command) => `${Object.keys(command)[0]} ${String(Object.values(command)[0])}`);

  it('records a step in one transaction: the entry looked up, the invocation updated under the lease, the entry inserted, a majority commit', async () => {
    invocationIs(running);
    const step = { name: 'send', occurrence: 2, attempts: 1, startedAt: now, status: 'done' as const, resultJson: '{"id":7}', finishedAt: now };
    expect(await store.journal.record(ref, lease, step, limits)).toMatchObject({ name: 'send', occurrence: 2, status: 'done', resultJson: '{"id":7}' });
    const [lookup] = fake.named('find');
    expect(lookup).toMatchObject({ find: 'invocationJournal', filter: { botId: 'bot-a', invocationId: 'inv-1', name: 'send', occurrence: 2 }, startTransaction: true, autocommit: false });
    expect(lookup.readConcern).toEqual({ level: 'majority' });
    const transaction = inTransactionOf(lookup);
    expect(commandNames(transaction)).toEqual(['find invocationJournal', 'findAndModify invocations', 'insert invocationJournal', 'commitTransaction 1']);
    const [, grow, insert, commit] = transaction;
    expect(grow).toMatchObject({
      query: { _id: 'inv-1', botId: 'bot-a', status: 'Running', leaseOwner: 'w1', attempt: 3 },
      update: { $inc: { steps: 1, journalBytes: 8 }, $set: { progressAttempt: 3 } },
      new: false,
    });
    // The next in the invocation's order, expiring with it; the result kept as JSON text.
    expect(insert.documents).toEqual([
      expect.objectContaining({ botId: 'bot-a', invocationId: 'inv-1', name: 'send', occurrence: 2, seq: 5, status: 'done', result: '{"id":7}', resultBytes: 8, expireAt }),
    ]);
    expect(commit.writeConcern).toMatchObject({ w: 'majority' });
  });

  it('writes nothing and commits nothing for a run that lost its lease, and aborts a write past a limit', async () => {
    const step = { name: 'send', occurrence: 1, attempts: 1, startedAt: now, status: 'done' as const, resultJson: '1', finishedAt: now };
    invocationIs(null);
    expect(await store.journal.record(ref, lease, step, limits)).toBeNull();
    expect(fake.named('insert')).toEqual([]);
    invocationIs({ ...running, steps: 10 });
    await expect(store.journal.record(ref, lease, step, { ...limits, maxSteps: 10 })).rejects.toBeInstanceOf(JournalLimitExceeded);
    expect(fake.named('insert')).toEqual([]);
    const [refused] = fake.named('findAndModify').slice(-1);
    expect(commandNames(inTransactionOf(refused)).at(-1)).toBe('abortTransaction 1');
    // Too large a result is refused before anything is sent.
    const sent = fake.commands.length;
    await expect(store.journal.record(ref, lease, { ...step, resultJson: JSON.stringify('x'.repeat(100)) }, { ...limits, maxResultBytes: 64 })).rejects.toBeInstanceOf(JournalLimitExceeded);
    expect(fake.commands.length).toBe(sent);
  });

  it('sends an event in one transaction that writes the invocation first, so a suspension racing it conflicts with it', async () => {
    invocationIs({ ...running, status: 'Waiting' });
    fake.answer('find', (command) => cursorReply(command, command.find === 'invocationJournal' ? [{ _id: 'e', occurrence: 2 }] : []));
    expect(await store.journal.sendEvent(ref, { name: 'approval', payloadJson: '{"ok":true}', at: now }, limits)).toEqual({ delivered: 'resumed', pool: 'bulk' });
    const [first] = fake.named('findAndModify');
    expect(first).toMatchObject({
      findAndModify: 'invocations',
      query: { _id: 'inv-1', botId: 'bot-a', status: { $in: ['Queued', 'Running', 'Waiting'] }, expireAt: { $gt: new Date(now) } },
      update: { $inc: { journalBytes: 11, eventSeq: 1 } },
      startTransaction: true,
    });
    const transaction = inTransactionOf(first);
    expect(commandNames(transaction)).toEqual(['findAndModify invocations', 'find invocationJournal', 'update invocationJournal', 'update invocations', 'commitTransaction 1']);
    const [, wait, complete, resume, commit] = transaction;
    expect(wait).toMatchObject({ filter: { name: 'approval', kind: 'event', status: 'waiting', until: { $gt: now } }, sort: { occurrence: 1 } });
    expect((complete.updates as Document[])[0]).toMatchObject({ q: { name: 'approval', occurrence: 2, status: 'waiting' }, u: { $set: { status: 'done', result: '{"ok":true}' } } });
    expect((resume.updates as Document[])[0]).toMatchObject({ q: { _id: 'inv-1', status: 'Waiting' }, u: { $set: { status: 'Queued', waiting: null, publishedAt: now } } });
    expect(commit.writeConcern).toMatchObject({ w: 'majority' });
  });

  it('suspends in one transaction: the open wait looked up, the invocation updated under the lease, the journal kept as long as it on the first suspension', async () => {
    const keepUntil = now + 30 * 86_400_000;
    fake.answer('find', (command) => cursorReply(command, [{ _id: 'e' }]));
    invocationIs({ _id: 'inv-1', expireAt });
    const suspension = { reason: { kind: 'event' as const, name: 'approval', until: now + 60_000 }, activeMs: 250, keepUntil };
    expect(await store.invocations.suspend(ref, lease, suspension, now)).toBe('waiting');
    const [lookup] = fake.named('find');
    const transaction = inTransactionOf(lookup);
    expect(commandNames(transaction)).toEqual(['find invocationJournal', 'findAndModify invocations', 'update invocationJournal', 'update invocationEvents', 'commitTransaction 1']);
    const [, suspend, entries, events, commit] = transaction;
    expect(lookup.filter).toEqual({ botId: 'bot-a', invocationId: 'inv-1', name: 'approval', kind: 'event', status: 'waiting' });
    expect(suspend.query).toEqual({ _id: 'inv-1', botId: 'bot-a', status: 'Running', leaseOwner: 'w1', attempt: 3 });
    const [stage] = suspend.update as Document[];
    expect(stage.$set).toMatchObject({
      status: { $literal: 'Waiting' },
      waiting: { $literal: suspension.reason },
      leaseOwner: null,
      retainMs: { $ifNull: ['$retainMs', { $subtract: [{ $toLong: '$expireAt' }, '$createdAt'] }] },
      expireAt: { $max: ['$expireAt', { $literal: new Date(keepUntil) }] },
    });
    for (const move of [entries, events]) {
      expect((move.updates as Document[])[0]).toMatchObject({ q: { botId: 'bot-a', invocationId: 'inv-1', expireAt: { $lt: new Date(keepUntil) } }, u: { $set: { expireAt: new Date(keepUntil) } }, multi: true });
    }
    expect(commit.writeConcern).toMatchObject({ w: 'majority' });
    // Suspended before: its journal is kept as long already, nothing to move.
    fake.commands.length = 0;
    invocationIs({ _id: 'inv-1', expireAt: new Date(keepUntil) });
    expect(await store.invocations.suspend(ref, lease, suspension, now)).toBe('waiting');
    expect(fake.named('update')).toEqual([]);
  });

  it('wakes due invocations from the wake-up index in three steps: candidates by wake time, one conditional update, the ones it took', async () => {
    fake.answer('find', (command) => cursorReply(command, command.filter.sweepToken ? [{ _id: 'a', botId: 'bot-a', pool: 'bulk' }] : [{ _id: 'a' }]));
    expect(await store.invocations.wakeDue(now, 25)).toEqual([{ botId: 'bot-a', id: 'a', pool: 'bulk' }]);
    const [candidates] = fake.named('find');
    const due = { status: 'Waiting', 'waiting.until': { $lte: now }, expireAt: { $gt: new Date(now) } };
    expect(candidates).toMatchObject({ find: 'invocations', filter: due, sort: { 'waiting.until': 1 }, limit: 25 });
    const [statement] = fake.named('update')[0].updates as Document[];
    expect(statement).toMatchObject({ q: { ...due, _id: { $in: ['a'] } }, multi: true, u: { $set: { status: 'Queued', waiting: null, publishedAt: now } } });
  });

  it('creates the journal\'s indexes at start: unique per step, in write order, deleted by the TTL monitor with their invocation', async () => {
    await store.close();
    fake.commands.length = 0;
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000 });
    const created = (collection: string) => fake.named('createIndexes').find((command) => command.createIndexes === collection);
    expect(created('invocationJournal')).toMatchObject({
      indexes: [
        { name: 'unique_bot_invocation_step', key: { botId: 1, invocationId: 1, name: 1, occurrence: 1 }, unique: true },
        { name: 'bot_invocation_in_order', key: { botId: 1, invocationId: 1, seq: 1 } },
        { name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 },
      ],
      writeConcern: { w: 'majority' },
      commitQuorum: 'majority',
    });
    expect(created('invocationEvents')?.indexes).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    expect(created('invocations')?.indexes).toContainEqual({ name: 'waiting_by_wake', key: { 'waiting.until': 1 }, partialFilterExpression: { status: 'Waiting' } });
  });
});
