import type { Document } from 'mongodb';
import { GiError, UnrecordableOutcome } from '@gi/domain';
import type { IdempotencyRecord, Store } from '@gi/domain';
import { createMongoStore } from '@gi/store-mongo';
import { newInvocation } from './fixtures';
import { cursorReply, FakeMongod, serverReplies } from './fake-mongod.fixture';

/**
 * What the MongoDB store does when a replica set is lagging, failing over or refusing a document,
 * against a stand-in server that answers with the replies a real mongod sends in those cases
 * (serverReplies). The stand-in stores nothing: these tests show what the store sends and how it
 * takes each answer; the store contract shows the behaviour against a real server where one runs.
 */
describe('MongoDB store under lag, failover and large documents (on the wire)', () => {
  const now = Date.UTC(2026, 0, 1);
  const clock = { now: () => now };
  let fake: FakeMongod;
  let store: Store | undefined;

  beforeEach(async () => {
    fake = await FakeMongod.start({ replicaSet: true });
  });

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await fake.stop();
  });

  const open = async (options: { url?: string; majorityWaitMs?: number; serverSelectionTimeoutMS?: number } = {}) => {
    const { url = fake.url, serverSelectionTimeoutMS = 1_000, majorityWaitMs } = options;
    store = await createMongoStore(url, { serverSelectionTimeoutMS, clock, majorityWaitMs });
    fake.commands.length = 0;
    return store;
  };
  const on = (name: string, collection: string) => fake.named(name).filter((command) => command[name] === collection);
  const deletesOf = (collection: string) =>
    on('delete', collection).map((command) => ({ q: (command.deletes as Document[])[0].q, writeConcern: command.writeConcern, inTransaction: command.autocommit === false }));
  const unavailable = { code: 'unavailable', headers: { 'Retry-After': '5' } };

  describe('an Idempotency-Key taken by a concurrent request', () => {
    const inv = newInvocation({ createdAt: now });
    const record: IdempotencyRecord = { botId: 'bot-a', key: 'k1', fingerprint: 'f2', invocationId: inv.id, createdAt: now, expireAt: now + 60_000 };
    const holder = { botId: 'bot-a', key: 'k1', fingerprint: 'f1', invocationId: 'first', createdAt: now - 5, expireAt: new Date(now + 60_000) };

    it('is answered only once the majority holds the holder, so the invocation it names can be read', async () => {
      await open();
      // The winner's transaction has committed on the primary: every take meets its key (E11000). A
      // majority read sees the holder only from the third read on (replication caught up).
      fake.answer('update', (command) => serverReplies.duplicateKey(command, 'unique_bot_key', { botId: 'bot-a', key: 'k1' }));
      let reads = 0;
      fake.answer('find', (command) => cursorReply(command, command.find === 'idempotencyKeys' && ++reads >= 3 ? [holder] : []));

      expect(await store!.invocations.createWithKey(inv, record)).toEqual({ ...holder, expireAt: now + 60_000 });
      const keyReads = on('find', 'idempotencyKeys');
      expect(keyReads).toHaveLength(3);
      for (const read of keyReads) expect(read.readConcern).toEqual({ level: 'majority' });
      // Each miss tried the key again (its holder may have failed and been undone), in a transaction of its own.
      const takes = on('update', 'idempotencyKeys');
      expect(takes).toHaveLength(3);
      for (const take of takes) expect(take).toMatchObject({ startTransaction: true, autocommit: false, updates: [expect.objectContaining({ upsert: true })] });
      expect(on('insert', 'invocations')).toEqual([]);
      expect(fake.named('commitTransaction')).toEqual([]);
    });

    it('is refused as unavailable (503) when the majority does not confirm the holder in time, having stored nothing', async () => {
      await open({ majorityWaitMs: 300 });
      fake.answer('update', (command) => serverReplies.duplicateKey(command, 'unique_bot_key', { botId: 'bot-a', key: 'k1' }));
      await expect(store!.invocations.createWithKey(inv, record)).rejects.toMatchObject(unavailable);
      expect(on('find', 'idempotencyKeys').length).toBeGreaterThan(1);
      expect(on('insert', 'invocations')).toEqual([]);
    });

    it('runs the transaction again after a write conflict with the concurrent one (TransientTransactionError)', async () => {
      await open();
      fake.answerNext('update', () => serverReplies.writeConflict());
      expect(await store!.invocations.createWithKey(inv, record)).toBeNull();
      expect(on('update', 'idempotencyKeys')).toHaveLength(2);
      expect(fake.named('abortTransaction')).toHaveLength(1);
      expect(fake.named('commitTransaction')).toHaveLength(1);
    });
  });

  describe('a write the majority does not confirm in time (write concern timeout)', () => {
    it('is undone on the primary before the caller hears 503: the sweeper never runs what was refused', async () => {
      await open();
      fake.answer('insert', () => serverReplies.writeConcernTimeout());
      const inv = newInvocation({ createdAt: now });
      const failure = await store!.invocations.create(inv).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(GiError);
      expect(failure).toMatchObject(unavailable);
      expect(deletesOf('invocations')).toEqual([{ q: { _id: inv.id, botId: 'bot-a', status: 'Queued' }, writeConcern: { w: 1 }, inTransaction: false }]);
    });

    it('with a key: the commit is not retried for minutes; key and invocation are undone together, then 503', async () => {
      await open();
      fake.answer('commitTransaction', (command) => (command.writeConcern?.w === 1 ? { ok: 1 } : serverReplies.writeConcernTimeout({})));
      fake.answer('delete', (command) => ({ n: (command.deletes as Document[]).length, ok: 1 }));
      const inv = newInvocation({ createdAt: now });
      const record: IdempotencyRecord = { botId: 'bot-a', key: 'k9', fingerprint: 'f', invocationId: inv.id, createdAt: now, expireAt: now + 60_000 };
      const started = Date.now();
      await expect(store!.invocations.createWithKey(inv, record)).rejects.toMatchObject(unavailable);
      // The driver's withTransaction commits again on UnknownTransactionCommitResult for up to 120 s.
      expect(Date.now() - started).toBeLessThan(3_000);
      // The transaction's own commit, then the undo's, acknowledged by the primary alone.
      expect(fake.named('commitTransaction').map((command) => command.writeConcern)).toEqual([
        { w: 'majority', wtimeout: 10_000 },
        { w: 1, wtimeout: 10_000 },
      ]);
      expect(deletesOf('invocations')).toEqual([{ q: { _id: inv.id, botId: 'bot-a', status: 'Queued' }, writeConcern: undefined, inTransaction: true }]);
      expect(deletesOf('idempotencyKeys')).toEqual([{ q: { botId: 'bot-a', key: 'k9', invocationId: inv.id }, writeConcern: undefined, inTransaction: true }]);
      // The undo reads the primary's latest data: at majority it would not see the write it undoes.
      expect(on('delete', 'invocations')[0]).toMatchObject({ startTransaction: true, readConcern: { level: 'local' } });
    });

    it('answers 503 for any other operation, as the store being unavailable', async () => {
      await open();
      fake.answer('findAndModify', () => serverReplies.writeConcernTimeout({ lastErrorObject: { n: 1, updatedExisting: true }, value: null }));
      await expect(store!.invocations.claim({ botId: 'bot-a', id: 'x' }, 'w1', 1000, now)).rejects.toMatchObject(unavailable);
    });
  });

  describe('a failover', () => {
    it('retries a write cut short by it once, on the new primary, as the same retryable write', async () => {
      // Through the set's URL: the retry waits for a primary to be elected, however quickly the driver looks.
      await open({ url: fake.replicaSetUrl, serverSelectionTimeoutMS: 5_000 });
      fake.answerNext('insert', (command) => {
        fake.stepDown();
        setTimeout(() => fake.stepUp(), 300);
        return serverReplies.notWritablePrimary(command);
      });
      const inv = newInvocation({ createdAt: now });
      await store!.invocations.create(inv);
      const inserts = on('insert', 'invocations');
      expect(inserts).toHaveLength(2);
      expect(inserts[1].txnNumber).toEqual(inserts[0].txnNumber);
      expect(inserts[1].lsid).toEqual(inserts[0].lsid);
      expect(deletesOf('invocations')).toEqual([]);
    });

    it('answers 503 (with Retry-After) while no primary is elected, for reads and writes of every part of the store', async () => {
      await open({ url: fake.replicaSetUrl, serverSelectionTimeoutMS: 400 });
      fake.stepDown();
      const ref = { botId: 'bot-a', id: 'inv-1' };
      await expect(store!.invocations.getState(ref)).rejects.toMatchObject(unavailable);
      await expect(store!.invocations.list('bot-a', { limit: 5 })).rejects.toMatchObject(unavailable);
      await expect(store!.catalog.getQuotas('bot-a')).rejects.toMatchObject(unavailable);
      await expect(store!.tokens.get('bot-a', 't1')).rejects.toMatchObject(unavailable);
      await expect(store!.instances.heartbeat('gateway', 'g1', now, 6000)).rejects.toMatchObject(unavailable);
      fake.stepUp();
    }, 20_000);

    it('refuses writes on a member that lost the primary role as unavailable, after the one retry', async () => {
      await open();
      fake.stepDown();
      await expect(store!.invocations.complete({ botId: 'bot-a', id: 'x' }, 'w1', { status: 'Completed', responseBody: 1 }, [], now)).rejects.toMatchObject(unavailable);
      const updates = on('findAndModify', 'invocations');
      expect(updates).toHaveLength(2);
      expect(updates[1].txnNumber).toEqual(updates[0].txnNumber);
      fake.stepUp();
    });

    it('sends a multi-document write of a sweep again when a failover cut it short (no retryable write does)', async () => {
      await open();
      fake.answer('find', (command) => cursorReply(command, command.filter.sweepToken ? [{ _id: 'a', botId: 'bot-a', pool: 'default' }] : [{ _id: 'a' }]));
      fake.answerNext('update', (command) => serverReplies.notWritablePrimary(command));
      expect(await store!.invocations.takeUnpublished(now - 60_000, now, 10)).toEqual([{ botId: 'bot-a', id: 'a', pool: 'default' }]);
      const updates = on('update', 'invocations');
      expect(updates).toHaveLength(2);
      expect(updates[0].txnNumber).toBeUndefined();
      expect(updates[1].updates).toEqual(updates[0].updates);

      fake.answerNext('delete', (command) => serverReplies.notWritablePrimary(command));
      await store!.invocations.deleteExpired(now);
      expect(deletesOf('idempotencyKeys')).toHaveLength(2);

      fake.answerNext('update', (command) => serverReplies.notWritablePrimary(command));
      await store!.catalog.rotateSigningSecret('bot-a', { secret: 'whsec_x', createdAt: now, expiresAt: null }, now + 60_000);
      expect(on('update', 'signingSecrets')).toHaveLength(2);
      expect(on('insert', 'signingSecrets')).toHaveLength(1);
    });
  });

  describe('sweeps and expiry', () => {
    it('find what they move through the key of an index, never by an in-memory sort', async () => {
      await open();
      await store!.invocations.requeueExpiredLeases(now);
      await store!.invocations.takeUnpublished(now - 60_000, now, 10);
      await store!.invocations.takeDueCallbacks(now, 30_000, 10);
      expect(on('find', 'invocations').map((command) => command.sort)).toEqual([{ leaseUntil: 1 }, { publishedAt: 1 }, { 'callback.dueAt': 1 }]);
    });

    it('a callback is not due until its invocation finishes: empty at creation, the finish time once it does', async () => {
      await open();
      const inv = newInvocation({ createdAt: now, callbackUrl: 'https://hooks.example.com/x' });
      await store!.invocations.create(inv);
      expect((on('insert', 'invocations')[0].documents as Document[])[0].callback).toEqual({
        url: 'https://hooks.example.com/x',
        state: 'pending',
        attempts: 0,
        dueAt: null,
        error: null,
        deliveredAt: null,
      });
      await store!.invocations.complete(inv, 'w1', { status: 'Completed', responseBody: '$where' }, [{ at: now, level: 'info', message: '$$ROOT' }], now);
      await store!.invocations.cancel(inv, { code: 'cancelled', title: 't', detail: 'd' }, now);
      const [completion, cancellation] = on('findAndModify', 'invocations');
      for (const pipeline of [completion.update, cancellation.update] as Document[][]) {
        // One atomic pipeline update: the callback (where there is one) falls due, caller data stays literal.
        const [stage] = pipeline;
        expect(stage.$set.callback).toEqual({ $cond: [{ $eq: ['$callback.state', 'pending'] }, { $mergeObjects: ['$callback', { dueAt: now }] }, '$callback'] });
        // It waits for nothing; one that ever suspended expires from its end, any other keeps its expiry.
        expect(stage.$set.waiting).toBeNull();
        expect(stage.$set.expireAt).toEqual({ $cond: [{ $gt: ['$retainMs', null] }, { $add: [{ $literal: new Date(now) }, '$retainMs'] }, '$expireAt'] });
        expect(stage.$set.status).toEqual({ $literal: expect.any(String) });
        expect(stage.$set.outcome).toEqual({ $literal: expect.any(String) });
      }
      expect((completion.update as Document[])[0].$set.logs).toEqual({ $literal: [{ at: now, level: 'info', message: '$$ROOT' }] });
    });

    it('never deletes an invocation whose run holds its lease: only unleased ones, and running ones whose lease lapsed', async () => {
      await open();
      await store!.invocations.deleteExpired(now);
      expect(deletesOf('invocations').map((d) => d.q)).toEqual([
        { expireAt: { $lte: new Date(now) }, leaseOwner: { $type: 'null' } },
        { status: 'Running', leaseUntil: { $lt: now }, expireAt: { $lte: new Date(now) } },
      ]);
    });
  });

  it('records an outcome the server finds too large as a failure that says so, not an error tried on every delivery', async () => {
    await open();
    fake.answer('findAndModify', () => serverReplies.documentTooLarge());
    await expect(store!.invocations.complete({ botId: 'bot-a', id: 'x' }, 'w1', { status: 'Completed', responseBody: 1 }, [], now)).rejects.toBeInstanceOf(
      UnrecordableOutcome,
    );
  });

  it('takes a connection string that repeats its own settings, and still sends its own on every command', async () => {
    await open({ url: `${fake.url}&w=majority&retryWrites=true&readConcernLevel=majority` });
    await store!.invocations.get({ botId: 'bot-a', id: 'x' });
    await store!.invocations.renewLease({ botId: 'bot-a', id: 'x' }, 'w1', 1000, now);
    expect(on('find', 'invocations')[0].readConcern).toEqual({ level: 'majority' });
    expect(on('update', 'invocations')[0].writeConcern).toEqual({ w: 'majority', wtimeout: 10_000 });
  });
});
