import { createHash } from 'node:crypto';
import { MongoClient, ObjectId } from 'mongodb';
import type { Binary, Document } from 'mongodb';
import { createGridFsFileStore } from '@gi/files-gridfs';
import type { GridFsFileStore } from '@gi/files-gridfs';
import { cursorReply, FakeMongod } from './fake-mongod.fixture';

/**
 * What the GridFS file store puts on the wire, recorded by a stand-in server (no MongoDB runs here).
 * The stand-in answers with documents each test chooses; it never stores or filters anything, so these
 * tests show what the store asks and how it uses the answers, not how MongoDB behaves: the file store
 * contract against a real server (file-store-contract.gridfs.medium.test.ts) does that.
 */
describe('GridFS file store on the wire', () => {
  const owner = { botId: 'bot-a', id: 'inv-1' };
  const ownerFilter = { 'metadata.botId': 'bot-a', 'metadata.invocationId': 'inv-1' };
  const majority = { w: 'majority', wtimeout: 10_000 };
  let fake: FakeMongod;
  let client: MongoClient;
  let files: GridFsFileStore;

  beforeEach(async () => {
    fake = await FakeMongod.start({ replicaSet: true });
    // A client with no durability settings of its own: the store must bring them.
    client = new MongoClient(fake.url, { serverSelectionTimeoutMS: 2_000 });
    files = await createGridFsFileStore(client.db(), { chunkSizeBytes: 8 });
  });

  afterEach(async () => {
    await client.close();
    await fake.stop();
  });

  const named = (name: string, collection: string) => fake.named(name).filter((command) => command[name] === collection);
  const deletes = () => fake.named('delete').map((command) => ({ from: command.delete as string, q: (command.deletes as Document[])[0].q }));
  const bytesOf = (data: Binary) => Buffer.from(data.buffer).toString();

  async function* source(...parts: Array<string | Error>): AsyncGenerator<Uint8Array> {
    for (const part of parts) {
      if (part instanceof Error) throw part;
      yield Buffer.from(part);
    }
  }

  it('creates the GridFS indexes and the owner index at start, with majority write concern', () => {
    const created = fake.named('createIndexes');
    expect(created.map((command) => [command.createIndexes, (command.indexes as Document[]).map((index) => index.name)])).toEqual([
      ['files.files', ['filename_1_uploadDate_1', 'owner_upload_date']],
      ['files.chunks', ['files_id_1_n_1']],
    ]);
    expect((created[0].indexes as Document[])[1].key).toEqual({ 'metadata.botId': 1, 'metadata.invocationId': 1, uploadDate: 1 });
    expect((created[1].indexes as Document[])[0]).toMatchObject({ key: { files_id: 1, n: 1 }, unique: true });
    for (const command of created) expect(command.writeConcern).toEqual(majority);
  });

  describe('write', () => {
    beforeEach(() => {
      // A bucket that already holds files: the driver then takes its indexes as created.
      fake.answer('find', (command) => cursorReply(command, command.find === 'files.files' ? [{ _id: new ObjectId() }] : []));
    });

    it('inserts the chunks one by one in order, then the files document with the owner, all with majority write concern', async () => {
      const stored = await files.write(owner, source('abcdefghij', 'klmnopqrstuv'));
      const data = 'abcdefghijklmnopqrstuv';
      expect(stored).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), size: 22, sha256: createHash('sha256').update(data).digest('hex') });

      const inserts = fake.named('insert');
      expect(inserts.map((command) => command.insert)).toEqual(['files.chunks', 'files.chunks', 'files.chunks', 'files.files']);
      const chunks = inserts.slice(0, 3).map((command) => (command.documents as Document[])[0]);
      expect(chunks.map((chunk) => [String(chunk.files_id), chunk.n, bytesOf(chunk.data)])).toEqual([
        [stored.id, 0, 'abcdefgh'],
        [stored.id, 1, 'ijklmnop'],
        [stored.id, 2, 'qrstuv'],
      ]);
      const [file] = inserts[3].documents as Document[];
      expect(file).toMatchObject({ filename: stored.id, length: 22, chunkSize: 8, metadata: { botId: 'bot-a', invocationId: 'inv-1' } });
      expect(String(file._id)).toBe(stored.id);
      for (const command of inserts) expect(command.writeConcern).toEqual(majority);
      // The files document is the last thing written: the write resolved only once it was acknowledged.
      expect(fake.commands.at(-1)).toBe(inserts[3]);
      expect(deletes()).toEqual([]);
    });

    it('when the source fails, records no file and deletes the chunks written, chunk 0 last', async () => {
      await expect(files.write(owner, source('abcdefghijklmnopqrst', new Error('client went away')))).rejects.toThrow('client went away');
      const inserts = fake.named('insert');
      expect(inserts.map((command) => command.insert)).toEqual(['files.chunks', 'files.chunks']);
      const id = (inserts[0].documents as Document[])[0].files_id as ObjectId;
      expect(deletes()).toEqual([
        { from: 'files.files', q: { _id: { $in: [id] } } },
        { from: 'files.chunks', q: { files_id: { $in: [id] }, n: { $gt: 0 } } },
        { from: 'files.chunks', q: { files_id: { $in: [id] } } },
      ]);
    });

    it('when the server refuses a chunk, rejects with its error and cleans up the same way', async () => {
      fake.answer('insert', (command) =>
        (command.documents as Document[])[0].n === 1
          ? { ok: 0, code: 14031, codeName: 'OutOfDiskSpace', errmsg: 'Cannot write: out of disk space' }
          : { n: 1, ok: 1 },
      );
      await expect(files.write(owner, source('abcdefghijklmnopqrst'))).rejects.toThrow('out of disk space');
      expect(named('insert', 'files.files')).toEqual([]);
      expect(deletes().map((d) => d.from)).toEqual(['files.files', 'files.chunks', 'files.chunks']);
    });

    it('refuses an owner that is not a plain name before sending anything', async () => {
      const before = fake.commands.length;
      await expect(files.write({ botId: '..', id: 'x' }, source('a'))).rejects.toThrow('Invalid file owner');
      expect(fake.commands.length).toBe(before);
    });
  });

  describe('read', () => {
    const id = new ObjectId();
    const content = 'abcdefghijklmnopqrstuv';
    const chunks = [0, 1, 2].map((n) => ({ _id: new ObjectId(), files_id: id, n, data: Buffer.from(content.slice(n * 8, n * 8 + 8)) }));
    const file = { _id: id, length: content.length, chunkSize: 8, uploadDate: new Date(), filename: id.toHexString(), metadata: { botId: 'bot-a', invocationId: 'inv-1' } };

    beforeEach(() => {
      // The stand-in serves one file; for the chunks it applies the `n >= skip` and limit the driver sends.
      fake.answer('find', (command) => {
        if (command.find === 'files.files') return cursorReply(command, [file]);
        const skip = (command.filter.n?.$gte as number | undefined) ?? 0;
        const found = chunks.filter((chunk) => chunk.n >= skip);
        return cursorReply(command, command.limit ? found.slice(0, command.limit as number) : found);
      });
    });

    const read = async (range?: { offset: number; length: number }) => Buffer.from((await files.read(owner, id.toHexString(), range))!).toString();

    it('looks the file up by id and owner with majority read concern, then cuts the range from the chunks', async () => {
      expect(await read()).toBe(content);
      const [lookup] = named('find', 'files.files');
      expect(lookup.filter).toEqual({ _id: id, ...ownerFilter });
      expect(lookup.readConcern).toEqual({ level: 'majority' });

      expect(await read({ offset: 2, length: 3 })).toBe('cde');
      expect(await read({ offset: 6, length: 10 })).toBe('ghijklmnop');
      expect(await read({ offset: 8, length: 8 })).toBe('ijklmnop');
      expect(await read({ offset: 17, length: 100 })).toBe('rstuv');
    });

    it('asks only for the chunks the range needs', async () => {
      await read({ offset: 17, length: 2 });
      const [chunkQuery] = named('find', 'files.chunks');
      expect(chunkQuery.filter).toEqual({ files_id: { $eq: id }, n: { $gte: 2 } });
      expect(chunkQuery.sort).toEqual({ n: 1 });
    });

    it('answers an empty range at or past the end without asking for chunks', async () => {
      expect(await read({ offset: 22, length: 5 })).toBe('');
      expect(await read({ offset: 50, length: 5 })).toBe('');
      expect(await read({ offset: 3, length: 0 })).toBe('');
      expect(named('find', 'files.chunks')).toEqual([]);
    });

    describe('racing a delete (files document first, then the chunks, chunk 0 last)', () => {
      /** The stand-in serves the file to the store's lookups until `gone` of them, and only `served` of its chunks. */
      const serve = (options: { lookups: number; served: number[] }) => {
        let lookups = 0;
        fake.answer('find', (command) => {
          if (command.find === 'files.files') return cursorReply(command, ++lookups <= options.lookups ? [file] : []);
          return cursorReply(command, chunks.filter((chunk) => options.served.includes(chunk.n) && chunk.n >= ((command.filter.n?.$gte as number) ?? 0)));
        });
      };

      it('answers null when the file went before the download looked it up', async () => {
        serve({ lookups: 1, served: [0, 1, 2] });
        expect(await files.read(owner, id.toHexString())).toBeNull();
      });

      it('answers null when a chunk went missing mid-download and the file is gone', async () => {
        serve({ lookups: 2, served: [0, 2] });
        expect(await files.read(owner, id.toHexString())).toBeNull();
        // The third lookup asked whether the file still exists, through its owner.
        expect(named('find', 'files.files')[2].filter).toEqual({ _id: id, ...ownerFilter });
      });

      it('answers null, not the first bytes alone, when the chunks ended early because the file is gone', async () => {
        serve({ lookups: 2, served: [0] });
        expect(await files.read(owner, id.toHexString())).toBeNull();
      });

      it('reports a file whose chunks are missing while it still exists as damaged', async () => {
        serve({ lookups: 3, served: [0] });
        await expect(files.read(owner, id.toHexString())).rejects.toThrow(`File ${id.toHexString()} lacks chunks: it ended after 8 of the 22 bytes asked for.`);
        serve({ lookups: 3, served: [0, 2] });
        await expect(files.read(owner, id.toHexString())).rejects.toThrow('ChunkIsMissing');
      });
    });

    it('answers null for an owner without the file and for ids it never made, and refuses bad ranges', async () => {
      fake.answer('find', (command) => cursorReply(command, []));
      expect(await files.read({ botId: 'bot-b', id: 'inv-1' }, id.toHexString())).toBeNull();
      expect(named('find', 'files.files')[0].filter).toMatchObject({ 'metadata.botId': 'bot-b' });
      const asked = fake.commands.length;
      for (const other of ['nope', `../${id.toHexString()}`, '', id.toHexString().toUpperCase()]) expect(await files.read(owner, other)).toBeNull();
      expect(fake.commands.length).toBe(asked);
      await expect(files.read(owner, id.toHexString(), { offset: -1, length: 2 })).rejects.toThrow(RangeError);
    });
  });

  it('deletes a file only through its owner: the files document first, then its chunks, chunk 0 last', async () => {
    const id = new ObjectId();
    expect(await files.delete(owner, id.toHexString())).toBe(false);
    expect(deletes()).toEqual([{ from: 'files.files', q: { _id: id, ...ownerFilter } }]);

    fake.answer('delete', (command) => ({ n: (command.deletes as Document[]).length, ok: 1 }));
    expect(await files.delete(owner, id.toHexString())).toBe(true);
    expect(deletes().slice(1)).toEqual([
      { from: 'files.files', q: { _id: id, ...ownerFilter } },
      { from: 'files.chunks', q: { files_id: { $in: [id] }, n: { $gt: 0 } } },
      { from: 'files.chunks', q: { files_id: { $in: [id] } } },
    ]);
    expect(fake.named('delete').every((command) => command.writeConcern?.w === 'majority')).toBe(true);
  });

  it('deletes all files of an owner by the ids it found, so a file recorded meanwhile is left whole', async () => {
    const [a, b] = [new ObjectId(), new ObjectId()];
    fake.answer('find', (command) => cursorReply(command, [{ _id: a }, { _id: b }]));
    await files.deleteAll(owner);
    expect(named('find', 'files.files')[0].filter).toEqual(ownerFilter);
    expect(deletes()).toEqual([
      { from: 'files.files', q: { _id: { $in: [a, b] } } },
      { from: 'files.chunks', q: { files_id: { $in: [a, b] }, n: { $gt: 0 } } },
      { from: 'files.chunks', q: { files_id: { $in: [a, b] } } },
    ]);
  });

  it('lists owners whose newest upload is older than the cut-off, skipping files without an owner', async () => {
    const before = Date.UTC(2026, 0, 1);
    fake.answer('aggregate', (command) => cursorReply(command, [{ _id: { botId: 'bot-a', invocationId: 'inv-1' } }, { _id: {} }]));
    expect(await files.listOwners(before)).toEqual([owner]);
    const [aggregate] = fake.named('aggregate');
    expect(aggregate.aggregate).toBe('files.files');
    expect(aggregate.pipeline).toEqual([
      { $sort: { 'metadata.botId': 1, 'metadata.invocationId': 1, uploadDate: 1 } },
      { $group: { _id: { botId: '$metadata.botId', invocationId: '$metadata.invocationId' }, lastUpload: { $last: '$uploadDate' } } },
      { $match: { lastUpload: { $lt: new Date(before) } } },
    ]);
  });

  it('sweeps abandoned writes in pages: first chunks begun before the cut-off whose file was never recorded', async () => {
    const before = Date.UTC(2026, 0, 1, 12, 0, 0, 750);
    const ids = Array.from({ length: 500 }, () => new ObjectId());
    const [lost, alsoLost] = [ids[10], ids[499]];
    fake.answer('find', (command) => {
      if (command.find === 'files.files') return cursorReply(command, ids.filter((id) => id !== lost && id !== alsoLost).map((_id) => ({ _id })));
      return cursorReply(command, command.filter.files_id.$gt ? [] : ids.map((files_id) => ({ files_id })));
    });
    expect(await files.deleteAbandoned(before)).toBe(2);

    const [first, second] = named('find', 'files.chunks');
    const cutoff = first.filter.files_id.$lt as ObjectId;
    expect(cutoff.getTimestamp().getTime()).toBe(Date.UTC(2026, 0, 1, 12));
    expect(first).toMatchObject({ filter: { files_id: { $lt: cutoff }, n: 0 }, sort: { files_id: 1 }, limit: 500, projection: { _id: 0, files_id: 1 } });
    expect(second.filter).toEqual({ files_id: { $gt: alsoLost, $lt: cutoff }, n: 0 });
    expect(named('find', 'files.files')[0].filter).toEqual({ _id: { $in: ids } });
    expect(deletes()).toEqual([
      { from: 'files.chunks', q: { files_id: { $in: [lost, alsoLost] }, n: { $gt: 0 } } },
      { from: 'files.chunks', q: { files_id: { $in: [lost, alsoLost] } } },
    ]);
  });
});
