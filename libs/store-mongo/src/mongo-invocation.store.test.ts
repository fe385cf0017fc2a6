import type { Collection, Document, MongoClient } from 'mongodb';
import type { IdempotencyKeyDocument, InvocationDocument, LogBatchDocument } from './mongo-documents';
import { MongoInvocationStore } from './mongo-invocation.store';
import type { JournalCollections } from './mongo-journal.store';

/**
 * The tenancy rule checked without a server: every operation on one invocation names both its id and
 * its bot, and every read of invocations filters out expired ones. (The behaviour itself is the store
 * contract, run against a real MongoDB in libs/testing.)
 */
class RecordingCollection {
  readonly calls: Array<{ method: string; filter: Document; options?: Document }> = [];

  async insertOne(doc: Document) {
    this.calls.push({ method: 'insertOne', filter: doc });
    return { acknowledged: true, insertedId: doc._id };
  }
  async findOne(filter: Document, options?: Document) {
    this.calls.push({ method: 'findOne', filter, options });
    return null;
  }
  async findOneAndUpdate(filter: Document, _update: Document, options?: Document) {
    this.calls.push({ method: 'findOneAndUpdate', filter, options });
    return null;
  }
  async updateOne(filter: Document) {
    this.calls.push({ method: 'updateOne', filter });
    return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
  }
  async updateMany(filter: Document) {
    this.calls.push({ method: 'updateMany', filter });
    return { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 0, upsertedId: null };
  }
  async deleteMany(filter: Document) {
    this.calls.push({ method: 'deleteMany', filter });
    return { acknowledged: true, deletedCount: 0 };
  }
  find(filter: Document, options?: Document) {
    this.calls.push({ method: 'find', filter, options });
    return { toArray: async () => [] };
  }
}

describe('MongoInvocationStore queries', () => {
  const ref = { botId: 'bot-a', id: 'inv-1' };
  const now = Date.UTC(2026, 0, 1);

  function open() {
    const collection = new RecordingCollection();
    const keys = new RecordingCollection() as unknown as Collection<IdempotencyKeyDocument>;
    // Transactions (createWithKey) need a real server: the store contract covers them.
    const logBatches = new RecordingCollection() as unknown as Collection<LogBatchDocument>;
    const journal = { entries: new RecordingCollection(), events: new RecordingCollection() } as unknown as JournalCollections;
    const store = new MongoInvocationStore(collection as unknown as Collection<InvocationDocument>, logBatches, keys, journal, {} as MongoClient, { now: () => now });
    return { collection, store };
  }

  it('names the bot next to the invocation id in every operation on one invocation', async () => {
    const { collection, store } = open();
    await store.get(ref);
    await store.getState(ref);
    await store.claim(ref, 'w1', 1000, now);
    await store.renewLease(ref, 'w1', 1000, now);
    await store.setProgress(ref, 'w1', { percent: 10 });
    await store.complete(ref, 'w1', { status: 'Completed', responseBody: 1 }, [], now);
    await store.giveUp(ref, { code: 'connector_failed', title: 'Gave up', detail: 'too many attempts' }, now);
    expect(collection.calls).toHaveLength(7);
    for (const call of collection.calls) expect(call.filter).toMatchObject({ _id: 'inv-1', botId: 'bot-a' });
  });

  it('filters expired invocations out of every read, by the date the TTL index uses', async () => {
    const { collection, store } = open();
    await store.get(ref);
    await store.getState(ref);
    await store.claim(ref, 'w1', 1000, now);
    await store.list('bot-a', { limit: 10 });
    await store.takeUnpublished(now - 1000, now, 10);
    await store.timings('bot-a', now - 3600_000, 10);
    const reads = collection.calls.filter((call) => call.method !== 'updateOne');
    expect(reads.map((call) => call.method)).toEqual(['findOne', 'findOne', 'findOneAndUpdate', 'find', 'find', 'find']);
    for (const call of reads) expect(call.filter.expireAt).toEqual({ $gt: new Date(now) });
    expect(collection.calls[3].filter).toMatchObject({ botId: 'bot-a' });
    expect(reads[5].filter).toMatchObject({ botId: 'bot-a', createdAt: { $gte: now - 3600_000 } });
  });

  it('reads an invocation\'s state without its entity and logs', async () => {
    const { collection, store } = open();
    await store.getState(ref);
    const projection = collection.calls[0].options?.projection;
    expect(Object.keys(projection)).toEqual(expect.arrayContaining(['status', 'attempt', 'outcome', 'progress', 'responseContentType']));
    expect(projection).not.toHaveProperty('entity');
    expect(projection).not.toHaveProperty('logs');
  });

  it('reads recent run times of one integration of one bot, newest first, through its index', async () => {
    const { collection, store } = open();
    await store.recentDurations('bot-a', 'ack', 20);
    expect(collection.calls[0]).toMatchObject({
      method: 'find',
      filter: { botId: 'bot-a', integrationId: 'ack' },
      options: { sort: { finishedAt: -1 }, limit: 20 },
    });
  });

  it('claims with one conditional update that returns the claimed document', async () => {
    const { collection, store } = open();
    expect(await store.claim(ref, 'w1', 1000, now)).toBeNull();
    expect(collection.calls[0].options).toEqual({ returnDocument: 'after' });
    expect(collection.calls[0].filter.$or).toEqual([{ status: 'Queued' }, { status: 'Running', leaseUntil: { $lt: now } }]);
  });

  const created = (entityJson: string, rawBody: string) => ({
    ...ref,
    tokenId: null,
    entityName: 'Order',
    integrationId: 'ack',
    integrationVersion: 1,
    pool: 'default',
    mode: 'async' as const,
    endpoint: 'GenericIntegration' as const,
    responseContentType: 'application/json',
    entityJson,
    rawBody,
    createdAt: now,
    expireAt: now + 1000,
    callbackUrl: null,
  });

  it('stores the caller entity as JSON text, so its field names are never operators, and the raw body beside it as text', async () => {
    const { collection, store } = open();
    const entity = { RequestParams: '', RequestHeaders: '', RequestBody: { $where: 'x', 'a.b': 1 }, ResponseBody: null };
    // Spaced otherwise than the entity's JSON: not a part of it, so kept apart.
    await store.create(created(JSON.stringify(entity), '{ "$where": "x", "a.b": 1 }'));
    const doc = collection.calls[0].filter;
    expect(doc).toMatchObject({ _id: 'inv-1', botId: 'bot-a', status: 'Queued', publishedAt: now, expireAt: new Date(now + 1000) });
    expect(JSON.parse(doc.entity)).toEqual(entity);
    expect(doc.rawBody).toBe('{ "$where": "x", "a.b": 1 }');
    expect(doc).not.toHaveProperty('rawBodySpan');
  });

  it('keeps a raw body that lies in the entity as sent once: its span there, no second copy', async () => {
    const { collection, store } = open();
    const raw = '{ "$where" : "x", "a.b": 1.0 }';
    const entityJson = `{"RequestParams":"","RequestHeaders":"","RequestBody":${raw},"ResponseBody":null}`;
    await store.create(created(entityJson, raw));
    const doc = collection.calls[0].filter;
    expect(doc.rawBody).toBeNull();
    expect(doc.entity.slice(doc.rawBodySpan[0], doc.rawBodySpan[1])).toBe(raw);
  });
});
