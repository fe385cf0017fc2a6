import { INDEXES } from './mongo-indexes';
import { createMongoStore, databaseNameOf, redactUrl } from './mongo-store';

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

  it('hides only the password of a URL', () => {
    expect(redactUrl('mongodb://gi:s3cr%40t@mongo:27017/gi')).toBe('mongodb://gi:***@mongo:27017/gi');
    expect(redactUrl('mongodb://mongo:27017/gi')).toBe('mongodb://mongo:27017/gi');
  });
});

describe('indexes', () => {
  it('expire invocations, Idempotency-Keys and instances by expireAt and keep versions, tokens, entities, keys and quotas unique per bot', () => {
    expect(INDEXES.instances).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    expect(INDEXES.invocations).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    expect(INDEXES.idempotencyKeys).toContainEqual({ name: 'ttl_expire_at', key: { expireAt: 1 }, expireAfterSeconds: 0 });
    const unique = Object.values(INDEXES)
      .flat()
      .filter((index) => index.unique)
      .map((index) => Object.keys(index.key));
    expect(unique).toEqual([
      ['botId', 'name'],
      ['botId', 'integrationId', 'version'],
      ['botId', 'tokenId'],
      ['botId', 'key'],
      ['botId', 'tokenId'],
    ]);
  });
});
