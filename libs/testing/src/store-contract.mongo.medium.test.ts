import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createMongoStore } from '@gi/store-mongo';
import { ManualClock } from './manual-clock';
import { describeWithMongo } from './mongo-test-server';
import { describeStoreContract } from './store.contract';

/**
 * The store contract against MongoDB: the replica set at MONGO_URL, else a one-node replica set in a
 * container when a Docker engine answers, else nothing (one SKIPPED line says why).
 */
describeWithMongo('MongoDB', 'MongoDB store contract', (mongo) => {
  let admin: MongoClient;
  beforeAll(async () => {
    admin = new MongoClient(mongo().url, { serverSelectionTimeoutMS: 10_000 });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.close();
  });

  // Each test gets its own database, dropped afterwards. The clock starts at the real time because
  // the server's TTL monitor deletes by its own clock.
  describeStoreContract('MongoDB', async () => {
    const dbName = `gi-test-${randomBytes(6).toString('hex')}`;
    const clock = new ManualClock(Date.now());
    const store = await createMongoStore(mongo().url, { clock, dbName, appName: 'gi-store-contract' });
    return {
      store,
      clock,
      async dispose() {
        await store.close();
        await admin.db(dbName).dropDatabase();
      },
    };
  });
});
