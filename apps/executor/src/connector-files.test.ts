import type { FileEntity, FileOwner, FileStore } from '@gi/domain';
import { connectorFileReader } from '@gi/use-cases';

const owner = { botId: 'bot-a', id: 'inv-1' };
const file = (Id: string): FileEntity => ({ Id, FileName: `${Id}.txt`, ContentType: 'text/plain', Size: 5, Sha256: '', PartName: 'f' });

/** A file store holding 'hello' as file 'f1' of inv-1, recording the reads. */
function fakeStore(reads: Array<[FileOwner, string]>, fail = false): FileStore {
  return {
    write: () => Promise.reject(new Error('unused')),
    read: async (o, id, range) => {
      reads.push([o, id]);
      if (fail) throw new Error('EIO: /data/files/bot-a/inv-1/f1');
      return o.id === 'inv-1' && id === 'f1' ? Buffer.from('hello').subarray(range?.offset ?? 0, (range?.offset ?? 0) + (range?.length ?? 5)) : null;
    },
    delete: async () => false,
    deleteAll: async () => undefined,
    deleteBot: async () => undefined,
    usedBytes: async () => 0,
    listOwners: async () => [],
  };
}

describe('connectorFileReader', () => {
  const log = { error: jest.fn() };

  it('reads the files of the run\'s own request, by range, under its invocation', async () => {
    const reads: Array<[FileOwner, string]> = [];
    const read = connectorFileReader(fakeStore(reads), owner, [file('f1')], log)!;
    expect(Buffer.from(await read('f1', { offset: 1, length: 3 })).toString()).toBe('ell');
    expect(reads).toEqual([[owner, 'f1']]);
  });

  it('refuses ids its request did not carry, without asking the store', async () => {
    const reads: Array<[FileOwner, string]> = [];
    const read = connectorFileReader(fakeStore(reads), owner, [file('f1')], log)!;
    await expect(read('f2', { offset: 0, length: 1 })).rejects.toThrow("No file with Id 'f2' was uploaded with this request.");
    // A connector's id is quoted back cut to 100 characters.
    await expect(read(`${'x'.repeat(100)}tail`, { offset: 0, length: 1 })).rejects.toThrow(`No file with Id '${'x'.repeat(100)}' was uploaded`);
    expect(reads).toEqual([]);
  });

  it('says when a listed file is gone, and hides store errors from the connector', async () => {
    expect(await connectorFileReader(fakeStore([]), { ...owner, id: 'inv-2' }, [file('f1')], log)!('f1', { offset: 0, length: 1 }).catch((e: Error) => e.message)).toBe(
      "The file 'f1.txt' is no longer stored.",
    );
    const message = await connectorFileReader(fakeStore([], true), owner, [file('f1')], log)!('f1', { offset: 0, length: 1 }).catch((e: Error) => e.message);
    expect(message).toBe("The file 'f1.txt' could not be read; try again later.");
    expect(log.error).toHaveBeenCalledWith({ err: expect.objectContaining({ message: 'EIO: /data/files/bot-a/inv-1/f1' }), fileId: 'f1' }, 'file read failed');
  });

  it('is absent without files or without a file store', () => {
    expect(connectorFileReader(fakeStore([]), owner, undefined, log)).toBeUndefined();
    expect(connectorFileReader(fakeStore([]), owner, [], log)).toBeUndefined();
    expect(connectorFileReader(undefined, owner, [file('f1')], log)).toBeUndefined();
  });
});
