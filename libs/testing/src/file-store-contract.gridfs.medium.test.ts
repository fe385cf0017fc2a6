import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { createGridFsFileStore, FILES_BUCKET } from '@gi/files-gridfs';
import { describeFileStoreContract } from './file-store.contract';
import { describeWithMongo } from './mongo-test-server';

/**
 * The file store contract against GridFS (the sweep's own test is apps/executor/src/sweep-files.gridfs.medium.test.ts):
 * the replica set at MONGO_URL, else a one-node replica set in a container when a Docker engine answers,
 * else nothing (one SKIPPED line).
 */
describeWithMongo('GridFS', 'GridFS file store contract', (mongo) => {
  let admin: MongoClient;
  beforeAll(async () => {
    admin = new MongoClient(mongo().url, { serverSelectionTimeoutMS: 10_000 });
    await admin.connect();
  });
  afterAll(async () => {
    await admin?.close();
  });
  const freshDatabase = () => admin.db(`gi-test-${randomBytes(6).toString('hex')}`);

  // The store brings its own durability settings: it gets the plain database of the test's client.
  describeFileStoreContract('GridFS', async () => {
    const db = freshDatabase();
    const files = await createGridFsFileStore(db);
    return {
      files,
      async leftovers() {
        const recorded = await db.collection(`${FILES_BUCKET}.files`).find().toArray();
        const chunks = await db.collection(`${FILES_BUCKET}.chunks`).find().toArray();
        return [...recorded.map((file) => `files/${String(file._id)}`), ...chunks.map((chunk) => `chunks/${String(chunk.files_id)}/${chunk.n}`)];
      },
      dispose: async () => void (await db.dropDatabase()),
    };
  });
});
