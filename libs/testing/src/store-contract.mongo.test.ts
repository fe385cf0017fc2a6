import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import type { StartedMongoDBContainer } from '@testcontainers/mongodb';
import { createMongoStore } from '@gi/store-mongo';
import { dockerEngineAnswers } from './docker-engine';
import { ManualClock } from './manual-clock';
import { describeStoreContract } from './store.contract';

/**
 * The store contract against MongoDB: the replica set at MONGO_URL, else a one-node replica set in a
 * container when a Docker engine answers, else nothing (one SKIPPED line says why).
 */
const MONGO_URL = process.env.MONGO_URL || undefined;
const source = MONGO_URL ? 'url' : dockerEngineAnswers() ? 'container' : 'none';

if (source === 'none') {
  describe('Store contract: MongoDB', () => {
    process.stdout.write('SKIPPED MongoDB store contract: no MONGO_URL and no Docker engine\n');
    // Why: no MongoDB server can run here. When: this suite runs whenever MONGO_URL names a replica set or
    // a Docker engine answers (testcontainers starts one).
    it.skip('runs against MongoDB (set MONGO_URL to a replica set, or start a Docker engine)', () => undefined);
  });
} else {
  describe('MongoDB', () => {
    let url = MONGO_URL ?? '';
    let container: StartedMongoDBContainer | undefined;
    let admin: MongoClient;

    beforeAll(async () => {
      if (source === 'container') {
        const { MongoDBContainer } = await import('@testcontainers/mongodb');
        container = await new MongoDBContainer('mongo:8.0').start();
        // The member announces its in-container host name; talk to it directly, not through discovery.
        url = `${container.getConnectionString()}/?directConnection=true`;
      }
      admin = new MongoClient(url, { serverSelectionTimeoutMS: 10_000 });
      await admin.connect();
    }, 180_000);

    afterAll(async () => {
      await admin?.close();
      await container?.stop();
    }, 60_000);

    // Each test gets its own database, dropped afterwards. The clock starts at the real time because
    // the server's TTL monitor deletes by its own clock.
    describeStoreContract('MongoDB', async () => {
      const dbName = `gi-test-${randomBytes(6).toString('hex')}`;
      const clock = new ManualClock(Date.now());
      const store = await createMongoStore(url, { clock, dbName, appName: 'gi-store-contract' });
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
}
