import { createGridFsFileStore, FILES_BUCKET } from '@gi/files-gridfs';
import { describeFileStoreContract } from './file-store.contract';
import { describeWithMongo, freshDatabaseName, mongoTestClient } from './mongo-test-server';

/**
 * The file store contract against GridFS (the sweep's own test is apps/executor/src/sweep-files.gridfs.medium.test.ts):
 * the replica set at MONGO_URL, else a one-node replica set in a container when a Docker engine answers,
 * else nothing (one SKIPPED line).
 */
describeWithMongo('GridFS', 'GridFS file store contract', (mongo) => {
  const admin = mongoTestClient(mongo);

  // The store brings its own durability settings: it gets the plain database of the test's client.
  describeFileStoreContract('GridFS', async () => {
    const db = admin().db(freshDatabaseName());
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
