import { createMongoStore } from '@gi/store-mongo';
import { ManualClock } from './manual-clock';
import { describeWithMongo, freshDatabaseName, mongoTestClient } from './mongo-test-server';
import { describeStoreContract } from './store.contract';

/**
 * The store contract against MongoDB: the replica set at MONGO_URL, else a one-node replica set in a
 * container when a Docker engine answers, else nothing (one SKIPPED line says why).
 */
describeWithMongo('MongoDB', 'MongoDB store contract', (mongo) => {
  const admin = mongoTestClient(mongo);

  // Each test gets its own database, dropped afterwards. The clock starts at the real time because
  // the server's TTL monitor deletes by its own clock.
  describeStoreContract('MongoDB', async () => {
    const dbName = freshDatabaseName();
    const clock = new ManualClock(Date.now());
    const store = await createMongoStore(mongo().url, { clock, dbName, appName: 'gi-store-contract' });
    return {
      store,
      clock,
      async dispose() {
        await store.close();
        await admin().db(dbName).dropDatabase();
      },
    };
  });
});
