import { ObjectId } from 'mongodb';
import type { FileOwner } from '@gi/domain';
import { createGridFsFileStore, FILES_BUCKET } from '@gi/files-gridfs';
import type { GridFsFileStore } from '@gi/files-gridfs';
import { createMongoStore } from '@gi/store-mongo';
import type { MongoStore } from '@gi/store-mongo';
import { describeWithMongo, freshDatabaseName, ManualClock, mongoTestClient, newInvocation } from '@gi/testing';
import { sweepFiles } from './sweep-files';

/**
 * The file sweep against GridFS: the replica set at MONGO_URL, else a one-node replica set in a
 * container when a Docker engine answers, else nothing (one SKIPPED line).
 */
describeWithMongo('GridFS', 'GridFS file sweep', (mongo) => {
  const admin = mongoTestClient(mongo);

  describe('sweep', () => {
    let dbName: string;
    let clock: ManualClock;
    let store: MongoStore;
    let files: GridFsFileStore;
    beforeEach(async () => {
      dbName = freshDatabaseName();
      // The server's TTL monitor deletes by its own clock: start at the real time.
      clock = new ManualClock(Date.now());
      store = await createMongoStore(mongo().url, { clock, dbName, appName: 'gi-gridfs-sweep' });
      files = await createGridFsFileStore(store.database, { chunkSizeBytes: 4 });
    });
    afterEach(async () => {
      await store.close();
      await admin().db(dbName).dropDatabase();
    });

    async function* bytes(text: string): AsyncGenerator<Uint8Array> {
      yield Buffer.from(text);
    }
    const upload = async (owner: FileOwner) => (await files.write(owner, bytes(`file of ${owner.id}`))).id;
    const chunks = () => store.database.collection(`${FILES_BUCKET}.chunks`);

    it('deletes the files of expired and never-stored invocations, and keeps the rest', async () => {
      const live = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 2 * 3600_000 });
      const expiring = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 3600_000 });
      for (const inv of [live, expiring]) await store.invocations.create(inv);
      const liveFile = await upload(live);
      const expiringFile = await upload(expiring);
      const orphan = await upload({ botId: 'bot-a', id: 'never-stored' });
      const soon = Date.now() + 60_000;

      expect(await sweepFiles({ files, invocations: store.invocations }, soon)).toEqual({ owners: 1, abandoned: 0 });
      expect(await files.read({ botId: 'bot-a', id: 'never-stored' }, orphan)).toBeNull();
      expect(await files.read(expiring, expiringFile)).not.toBeNull();

      // Past its expiry the store no longer gives the invocation out, whether or not the TTL monitor ran.
      clock.advance(3600_000 + 1000);
      expect(await sweepFiles({ files, invocations: store.invocations }, soon)).toEqual({ owners: 1, abandoned: 0 });
      expect(await files.read(expiring, expiringFile)).toBeNull();
      expect(Buffer.from((await files.read(live, liveFile))!).toString()).toBe(`file of ${live.id}`);
      expect(await files.listOwners(soon)).toEqual([{ botId: live.botId, id: live.id }]);
      expect(await chunks().distinct('files_id')).toEqual([new ObjectId(liveFile)]);
    });

    it('deletes the chunks of uploads cut short by a crash once older than the cut-off, and nothing else', async () => {
      const live = newInvocation({ createdAt: clock.now(), expireAt: clock.now() + 3600_000 });
      await store.invocations.create(live);
      const kept = await upload(live);
      // What a gateway dying mid-upload leaves: chunks in order from 0 and no files document.
      const crashedLongAgo = ObjectId.createFromTime(Math.floor((Date.now() - 3 * 3600_000) / 1000));
      const stillUploading = new ObjectId();
      for (const files_id of [crashedLongAgo, stillUploading]) {
        await chunks().insertMany([0, 1, 2].map((n) => ({ files_id, n, data: Buffer.from(`part${n}`) })));
      }
      const before = Date.now() - 3600_000;
      expect(await sweepFiles({ files, invocations: store.invocations }, before)).toEqual({ owners: 0, abandoned: 1 });
      expect(await chunks().countDocuments({ files_id: crashedLongAgo })).toBe(0);
      expect(await chunks().countDocuments({ files_id: stillUploading })).toBe(3);
      expect(Buffer.from((await files.read(live, kept))!).toString()).toBe(`file of ${live.id}`);
      expect(await files.deleteAbandoned(before)).toBe(0);
    });

    it('records the owner in each file and finds it through the owner index', async () => {
      const stored = await files.write({ botId: 'bot-a', id: 'inv-7' }, bytes('x'));
      const recorded = store.database.collection(`${FILES_BUCKET}.files`);
      expect(await recorded.findOne({ _id: new ObjectId(stored.id) })).toMatchObject({ length: 1, metadata: { botId: 'bot-a', invocationId: 'inv-7' } });
      const plan = await recorded.find({ 'metadata.botId': 'bot-a', 'metadata.invocationId': 'inv-7' }).explain('queryPlanner');
      expect(JSON.stringify(plan.queryPlanner.winningPlan)).toContain('owner_upload_date');
    });
  });
});
