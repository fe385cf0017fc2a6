import { INDEXES, RETIRED_INDEXES } from './mongo-indexes';
import { MAJORITY_WAIT_MS } from './mongo-invocation.store';
import { createMongoStore, databaseNameOf, redactUrl, SERVER_SELECTION_MS, settingsConflict } from './mongo-store';

describe('createMongoStore', () => {
  it('fails with the server named and the password hidden when no server answers', async () => {
    const opening = createMongoStore('mongodb://gi:hunter2@127.0.0.1:1/gi', { serverSelectionTimeoutMS: 200 });
    await expect(opening).rejects.toThrow(/^Cannot open the MongoDB store at mongodb:\/\/gi:\*\*\*@127\.0\.0\.1:1\/gi: /);
    await expect(opening).rejects.not.toThrow(/hunter2/);
  });

  it('takes the database from the URL path', () => {
    expect(databaseNameOf('mongodb://a:1,b:2/orders?replicaSet=rs0')).toBe('orders');
    expect(databaseNameOf('mongodb+srv://u:p@cluster.example.com/gi%2Dprod')).toBe('gi-prod');
    expect(databaseNameOf('mongodb://a:1/?replicaSet=rs0')).toBeUndefined();
    expect(databaseNameOf('mongodb://a:1')).toBeUndefined();
  });

  it('refuses a connection string that sets a durability or consistency setting otherwise, before connecting', async () => {
    // The driver applies readConcernLevel after readConcern and a URL's wtimeoutMS over the code's: each would win silently.
    const url = 'mongodb://gi:hunter2@127.0.0.1:1/gi?replicaSet=rs0&readConcernLevel=local';
    await expect(createMongoStore(url, { serverSelectionTimeoutMS: 200 })).rejects.toThrow(
      'Cannot open the MongoDB store at mongodb://gi:***@127.0.0.1:1/gi?replicaSet=rs0&readConcernLevel=local: the connection string sets readConcernLevel=local, but the store sets readConcernLevel=majority itself',
    );
    expect(settingsConflict('mongodb://a/gi?wtimeoutMS=500')).toMatch(/sets wtimeoutMS=500, but the store sets wtimeoutMS=10000 itself/);
    expect(settingsConflict('mongodb://a/gi?W=1')).toMatch(/sets W=1, but the store sets w=majority/);
    expect(settingsConflict('mongodb://a/gi?journal=false')).toMatch(/journal=false/);
    expect(settingsConflict('mongodb://a/gi?readPreference=secondaryPreferred')).toMatch(/readPreference=primary/);
    expect(settingsConflict('mongodb://a/gi?retryWrites=false')).toMatch(/retryWrites=true/);
    expect(settingsConflict('mongodb://a/gi?serverSelectionTimeoutMS=1000')).toMatch(/serverSelectionTimeoutMS=20000/);
    expect(settingsConflict('mongodb://a/gi?maxStalenessSeconds=90')).toMatch(/reads from the primary only/);
    // The same values (as in Atlas' connection strings) and unrelated settings are fine.
    expect(settingsConflict('mongodb+srv://u:p@cluster.example.com/gi?retryWrites=true&w=majority&appName=x&authSource=admin')).toBeNull();
    expect(settingsConflict('mongodb://a,b,c/gi?replicaSet=rs0&readConcernLevel=MAJORITY&tls=true')).toBeNull();
    expect(settingsConflict('mongodb://a/gi')).toBeNull();
  });

  it('waits for a primary longer than an election takes, and for the majority as long as the alerts say', () => {
    // A new primary is elected within about 12 s with the server's defaults: the retry of a write cut
    // short by the failover must still find it.
    expect(SERVER_SELECTION_MS).toBeGreaterThanOrEqual(15_000);
    expect(MAJORITY_WAIT_MS).toBe(10_000);
  });

  it('hides only the password of a URL', () => {
    expect(redactUrl('mongodb://gi:s3cr%40t@mongo:27017/gi')).toBe('mongodb://gi:***@mongo:27017/gi');
    expect(redactUrl('mongodb://mongo:27017/gi')).toBe('mongodb://mongo:27017/gi');
  });
});

describe('indexes', () => {
  it('expire invocations, journals, Idempotency-Keys and instances by expireAt and keep versions, tokens, entities, keys and quotas unique per bot', () => {
    expect(INDEXES.instances).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    // Never an invocation an executor holds: its run goes on and records its outcome.
    expect(INDEXES.invocations).toContainEqual({
      name: 'ttl_expire_at_unleased',
      key: { expireAt: 1 },
      expireAfterSeconds: 0,
      partialFilterExpression: { leaseOwner: { $type: 'null' } },
    });
    expect(RETIRED_INDEXES.invocations).toEqual(['ttl_expire_at']);
    expect(INDEXES.idempotencyKeys).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    // A durable run's journal and kept events go with their invocation (their expiry follows its own).
    expect(INDEXES.invocationJournal).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    expect(INDEXES.invocationEvents).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    // Only Waiting invocations are in the wake-up index: plain ones never write an entry there.
    expect(INDEXES.invocations).toContainEqual({ name: 'waiting_by_wake', key: { 'waiting.until': 1 }, partialFilterExpression: { status: 'Waiting' } });
    const unique = Object.values(INDEXES)
      .flat()
      .filter((index) => index.unique)
      .map((index) => Object.keys(index.key));
    expect(unique).toEqual([
      ['botId', 'invocationId', 'name', 'occurrence'],
      ['botId', 'name'],
      ['botId', 'integrationId', 'version'],
      ['botId', 'tokenId'],
      ['botId', 'key'],
      ['botId', 'tokenId'],
      ['botId', 'scope', 'name'],
      ['botId', 'integrationId'],
      ['botId', 'integrationId'],
    ]);
  });
});
