import type { Document } from 'mongodb';
import type { Store } from '@gi/domain';
import { createMongoStore } from '@gi/store-mongo';
import { cursorReply, FakeMongod } from './fake-mongod.fixture';

/**
 * What the store puts on the wire, recorded by a stand-in server (no MongoDB runs here): the
 * durability settings must reach every command, not just sit in the client options.
 */
describe('MongoDB store on the wire', () => {
  const now = Date.UTC(2026, 0, 1);
  const ref = { botId: 'bot-a', id: 'inv-1' };
  const invocationDocument = {
    _id: 'inv-1',
    botId: 'bot-a',
    entityName: 'Order',
    integrationId: 'ack',
    integrationVersion: 1,
    pool: 'default',
    mode: 'async',
    endpoint: 'GenericIntegration',
    responseContentType: 'application/json',
    entity: '{"RequestParams":"","RequestHeaders":"","RequestBody":null,"ResponseBody":null}',
    rawBody: '',
    status: 'Completed',
    attempt: 1,
    leaseOwner: null,
    leaseUntil: null,
    createdAt: now,
    startedAt: now,
    finishedAt: now,
    publishedAt: now,
    expireAt: new Date(now + 60_000),
    outcome: '{"status":"Completed","responseBody":1}',
    logs: [{ at: 2, level: 'error', message: 'recorded' }],
    progress: null,
  };
  let fake: FakeMongod;
  let store: Store | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
    await fake.stop();
  });

  it('refuses a standalone server with a message that says how to make it a replica set', async () => {
    fake = await FakeMongod.start({ replicaSet: false });
    await expect(createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000 })).rejects.toThrow(
      /Cannot open the MongoDB store at .*: the server is a standalone mongod; the store needs a replica set .*--replSet/,
    );
    expect(fake.named('createIndexes')).toEqual([]);
  });

  it('creates every index at start with majority write concern, committed by a majority of the members, after dropping retired ones', async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000, clock: { now: () => now } });
    const created = fake.named('createIndexes');
    expect(created.map((command) => command.createIndexes)).toEqual([
      'invocations',
      'invocationLogs',
      'invocationJournal',
      'invocationEvents',
      'entities',
      'integrations',
      'tokens',
      'idempotencyKeys',
      'quotas',
      'signingSecrets',
      'secrets',
      'deletedIntegrations',
      'integrationDrafts',
      'instances',
    ]);
    expect(created.flatMap((command) => (command.indexes as Document[]).map((index) => index.name))).toEqual([
      'bot_newest_first',
      'queued_by_published',
      'running_by_lease',
      'recent_runs',
      'bot_by_status',
      'callbacks_due',
      'waiting_by_wake',
      'ttl_expire_at_unleased',
      'bot_invocation_in_order',
      'ttl_expire_at',
      'unique_bot_invocation_step',
      'bot_invocation_in_order',
      'ttl_expire_at',
      'bot_invocation_name_in_order',
      'ttl_expire_at',
      'unique_bot_entity',
      'unique_bot_integration_version',
      'unique_bot_token',
      'unique_bot_key',
      'ttl_expire_at',
      'unique_bot_quota',
      'bot_newest_first',
      'unique_bot_scope_name',
      'unique_bot_integration',
      'unique_bot_integration',
      'role_by_seen',
      'ttl_expire_at',
    ]);
    for (const command of created) expect(command).toMatchObject({ writeConcern: { w: 'majority', wtimeout: 10_000 }, commitQuorum: 'majority' });
    expect(created[0].$db).toBe('gi-fake');
    // The TTL index that deleted invocations still running goes before its successor on the same key is created.
    const [dropped] = fake.named('dropIndexes');
    expect(dropped).toMatchObject({ dropIndexes: 'invocations', index: 'ttl_expire_at' });
    expect(fake.commands.indexOf(dropped)).toBeLessThan(fake.commands.indexOf(created[0]));
  });

  it('sends writes as retryable majority writes and reads with majority read concern', async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000, clock: { now: () => now } });
    await store.invocations.claim(ref, 'w1', 30_000, now);
    await store.invocations.complete(ref, 'w1', { status: 'Completed', responseBody: {} }, [], now);
    await store.invocations.get(ref);
    await store.invocations.getState(ref);
    await store.tokens.get('bot-a', 't1');
    await store.catalog.resolveIntegration('bot-a', 'ack');

    const [claim, complete] = fake.named('findAndModify');
    expect(claim).toMatchObject({ findAndModify: 'invocations', new: true, writeConcern: { w: 'majority' }, query: { _id: 'inv-1', botId: 'bot-a' } });
    expect(claim.txnNumber).toBeDefined();
    expect(claim.lsid).toBeDefined();
    // The completion returns whether others wait (the watched flag) and nothing else.
    expect(complete).toMatchObject({ findAndModify: 'invocations', writeConcern: { w: 'majority' }, fields: { watched: 1 } });
    expect(complete.txnNumber).toBeDefined();
    expect(complete.query).toEqual({ _id: 'inv-1', botId: 'bot-a', status: 'Running', leaseOwner: 'w1' });
    const reads = fake.named('find');
    expect(reads.map((command) => command.find)).toEqual(['invocations', 'invocations', 'tokens', 'integrations']);
    for (const read of reads) expect(read.readConcern).toEqual({ level: 'majority' });
    // The state alone: the server leaves the entity and the logs out.
    expect(reads[1]).toMatchObject({ filter: { _id: 'inv-1', botId: 'bot-a' }, projection: { status: 1, outcome: 1 } });
    expect(reads[1].projection).not.toHaveProperty('entity');
    expect(reads[1].projection).not.toHaveProperty('logs');
    expect(reads[2].filter).toEqual({ botId: 'bot-a', tokenId: 't1' });
    // The latest version a call targets: no code read.
    expect(reads[3]).toMatchObject({ filter: { botId: 'bot-a', integrationId: 'ack' }, sort: { version: -1 }, limit: 1, projection: { version: 1, entityName: 1, pool: 1 } });
    expect(reads[3].projection).not.toHaveProperty('code');
  });

  it("appends a running attempt's lines in one transaction with a change of the invocation, and reads them after it", async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000, clock: { now: () => now } });
    const lines = [{ at: now, level: 'info' as const, message: 'hello' }];
    // The lease is not held: nothing is inserted.
    expect(await store.invocations.appendLogs(ref, 'w1', { attempt: 1, seq: 0, lines })).toBe(false);
    expect(fake.named('insert')).toEqual([]);

    const expireAt = new Date(now + 60_000);
    fake.answer('findAndModify', () => ({ lastErrorObject: { n: 1, updatedExisting: true }, value: { _id: 'inv-1', expireAt }, ok: 1 }));
    expect(await store.invocations.appendLogs(ref, 'w1', { attempt: 1, seq: 3, lines })).toBe(true);
    const leased = fake.named('findAndModify')[1];
    expect(leased).toMatchObject({ query: { _id: 'inv-1', botId: 'bot-a', status: 'Running', leaseOwner: 'w1', attempt: 1 }, update: { $inc: { logBatches: 1 } }, startTransaction: true, autocommit: false });
    const [insert] = fake.named('insert');
    expect(insert).toMatchObject({ insert: 'invocationLogs', autocommit: false });
    expect(insert.documents).toEqual([{ _id: 'inv-1:1:3', botId: 'bot-a', invocationId: 'inv-1', attempt: 1, seq: 3, lines, expireAt }]);
    expect(insert.lsid).toEqual(leased.lsid);
    expect(insert.txnNumber).toEqual(leased.txnNumber);
    const commits = fake.named('commitTransaction');
    expect(commits.at(-1)).toMatchObject({ writeConcern: { w: 'majority' }, txnNumber: leased.txnNumber });

    fake.answer('find', (command) =>
      cursorReply(command, command.find === 'invocations' ? [invocationDocument] : [{ attempt: 1, lines: [{ at: 1, level: 'info', message: 'streamed' }] }]),
    );
    const read = await store.invocations.get(ref);
    expect(read?.logs).toEqual([
      { at: 1, level: 'info', message: 'streamed', attempt: 1 },
      { at: 2, level: 'error', message: 'recorded', attempt: 1 },
    ]);
    const batches = fake.named('find').find((command) => command.find === 'invocationLogs');
    expect(batches).toMatchObject({ filter: { botId: 'bot-a', invocationId: 'inv-1' }, sort: { attempt: 1, seq: 1 }, readConcern: { level: 'majority' } });
  });

  it('sweeps in three steps: candidates, one conditional update stamping a token, then exactly the stamped ones', async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 2_000 });
    fake.answer('find', (command) => cursorReply(command, command.filter.sweepToken ? [{ _id: 'b', botId: 'bot-b', pool: 'bulk' }] : [{ _id: 'a' }, { _id: 'b' }]));
    expect(await store.invocations.takeUnpublished(now - 60_000, now, 50)).toEqual([{ botId: 'bot-b', id: 'b', pool: 'bulk' }]);

    const [candidates, taken] = fake.named('find');
    const stale = { status: 'Queued', publishedAt: { $lt: now - 60_000 }, expireAt: { $gt: new Date(now) } };
    // Sorted on the key of the index that finds them (queued_by_published): the server reads no more than the limit.
    expect(candidates).toMatchObject({ filter: stale, sort: { publishedAt: 1 }, limit: 50 });
    const [update] = fake.named('update');
    const [statement] = update.updates as Document[];
    expect(statement).toMatchObject({ q: { ...stale, _id: { $in: ['a', 'b'] } }, multi: true });
    const token = statement.u.$set.sweepToken;
    expect(statement.u.$set).toEqual({ publishedAt: now, sweepToken: token });
    expect(update.writeConcern).toEqual({ w: 'majority', wtimeout: 10_000 });
    expect(taken).toMatchObject({ filter: { _id: { $in: ['a', 'b'] }, sweepToken: token }, readConcern: { level: 'local' } });
    expect(taken).not.toHaveProperty('sort');
  });

  it('is ready while the server answers ping, and not once it is gone', async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    store = await createMongoStore(fake.url, { serverSelectionTimeoutMS: 500 });
    expect(await store.ping()).toBe(true);
    expect(fake.named('ping')).toHaveLength(1);
    await fake.stop();
    expect(await store.ping()).toBe(false);
    fake = await FakeMongod.start({ replicaSet: true }); // afterEach stops one
  });
});
