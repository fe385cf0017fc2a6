import { createHash } from 'node:crypto';
import type { FileStore } from '@gi/domain';

export interface FileStoreUnderTest {
  files: FileStore;
  /** Names of everything under the store's root, partial files included (to prove nothing is left behind). */
  leftovers(): Promise<string[]>;
  /** Removes what the test created. */
  dispose(): Promise<void>;
}

const owner = { botId: 'bot-a', id: 'inv-1' };
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

async function* chunks(...parts: Array<Buffer | Error>): AsyncGenerator<Uint8Array> {
  for (const part of parts) {
    if (part instanceof Error) throw part;
    yield part;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** The behaviour every FileStore adapter must show (local disk, GridFS). Run it with the adapter's factory. */
export function describeFileStoreContract(name: string, open: () => Promise<FileStoreUnderTest>): void {
  describe(`FileStore contract: ${name}`, () => {
    let subject: FileStoreUnderTest;
    beforeEach(async () => {
      subject = await open();
    });
    afterEach(async () => {
      await subject.dispose();
    });

    it('writes a stream under a generated id with its size and SHA-256, and reads it back whole', async () => {
      const data = Buffer.concat([Buffer.alloc(70_000, 'a'), Buffer.from('tail')]);
      const stored = await subject.files.write(owner, chunks(data.subarray(0, 65_536), data.subarray(65_536)));
      expect(stored).toEqual({ id: expect.any(String), size: data.length, sha256: sha256(data) });
      expect(Buffer.from((await subject.files.read(owner, stored.id))!)).toEqual(data);
      const second = await subject.files.write(owner, chunks(data));
      expect(second.id).not.toBe(stored.id);
    });

    it('reads byte ranges, clipped to the end of the file', async () => {
      const stored = await subject.files.write(owner, chunks(Buffer.from('0123456789')));
      const read = async (offset: number, length: number) => Buffer.from((await subject.files.read(owner, stored.id, { offset, length }))!).toString();
      expect(await read(2, 3)).toBe('234');
      expect(await read(8, 100)).toBe('89');
      expect(await read(10, 5)).toBe('');
      expect(await read(50, 5)).toBe('');
      await expect(subject.files.read(owner, stored.id, { offset: -1, length: 2 })).rejects.toThrow(RangeError);
    });

    it('keeps an empty file', async () => {
      const stored = await subject.files.write(owner, chunks());
      expect(stored).toMatchObject({ size: 0, sha256: sha256(Buffer.alloc(0)) });
      expect((await subject.files.read(owner, stored.id))!.byteLength).toBe(0);
    });

    it('gives a file only to its own owner, and nothing for ids it never made', async () => {
      const stored = await subject.files.write(owner, chunks(Buffer.from('secret')));
      expect(await subject.files.read({ botId: 'bot-b', id: owner.id }, stored.id)).toBeNull();
      expect(await subject.files.read({ botId: owner.botId, id: 'inv-2' }, stored.id)).toBeNull();
      for (const id of ['nope', '../inv-1/' + stored.id, '..', '']) expect(await subject.files.read(owner, id)).toBeNull();
    });

    it('removes the partial file when the source fails', async () => {
      await expect(subject.files.write(owner, chunks(Buffer.alloc(100_000, 1), new Error('client went away')))).rejects.toThrow('client went away');
      expect((await subject.leftovers()).filter((name) => !name.endsWith('/'))).toEqual([]);
    });

    it('deletes one file, then all files of an owner, and leaves other owners alone', async () => {
      const a = await subject.files.write(owner, chunks(Buffer.from('a')));
      const b = await subject.files.write(owner, chunks(Buffer.from('b')));
      const other = await subject.files.write({ botId: 'bot-a', id: 'inv-2' }, chunks(Buffer.from('c')));
      expect(await subject.files.delete(owner, a.id)).toBe(true);
      expect(await subject.files.delete(owner, a.id)).toBe(false);
      expect(await subject.files.read(owner, a.id)).toBeNull();
      await subject.files.deleteAll(owner);
      await subject.files.deleteAll(owner);
      expect(await subject.files.read(owner, b.id)).toBeNull();
      expect(Buffer.from((await subject.files.read({ botId: 'bot-a', id: 'inv-2' }, other.id))!).toString()).toBe('c');
    });

    it('counts the bytes of a bot\'s files, and deletes every file of a bot and no other bot\'s', async () => {
      await subject.files.write(owner, chunks(Buffer.alloc(1000, 1)));
      await subject.files.write({ botId: 'bot-a', id: 'inv-2' }, chunks(Buffer.alloc(500, 2)));
      const kept = await subject.files.write({ botId: 'bot-b', id: 'inv-1' }, chunks(Buffer.from('b')));
      expect([await subject.files.usedBytes('bot-a'), await subject.files.usedBytes('bot-b'), await subject.files.usedBytes('bot-c')]).toEqual([1500, 1, 0]);
      await subject.files.deleteBot('bot-a');
      await subject.files.deleteBot('bot-a');
      expect(await subject.files.usedBytes('bot-a')).toBe(0);
      expect(await subject.files.listOwners(Date.now() + 1000)).toEqual([{ botId: 'bot-b', id: 'inv-1' }]);
      expect(Buffer.from((await subject.files.read({ botId: 'bot-b', id: 'inv-1' }, kept.id))!).toString()).toBe('b');
    });

    it('lists the owners whose files were last written before a time, for the sweep', async () => {
      await subject.files.write(owner, chunks(Buffer.from('a')));
      await subject.files.write({ botId: 'bot-b', id: 'inv-9' }, chunks(Buffer.from('b')));
      expect(await subject.files.listOwners(Date.now() - 60_000)).toEqual([]);
      const listed = await subject.files.listOwners(Date.now() + 1000);
      expect(listed).toEqual(expect.arrayContaining([owner, { botId: 'bot-b', id: 'inv-9' }]));
      expect(listed).toHaveLength(2);
      await subject.files.deleteAll(owner);
      expect(await subject.files.listOwners(Date.now() + 1000)).toEqual([{ botId: 'bot-b', id: 'inv-9' }]);
    });

    it('refuses owners that are not plain names', async () => {
      await expect(subject.files.write({ botId: '..', id: 'x' }, chunks(Buffer.from('a')))).rejects.toThrow();
      await expect(subject.files.deleteAll({ botId: 'bot-a', id: '../../etc' })).rejects.toThrow();
    });
  });
}
