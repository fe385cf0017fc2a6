import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GiError } from '@gi/domain';
import type { FileOwner, FileStore, StoredFile } from '@gi/domain';
import { receiveFiles } from './receive-files';
import type { ReceivedRequest, UploadLimits } from './receive-files';

const limits: UploadLimits = {
  maxFileBytes: 1000,
  maxFiles: 3,
  maxUploadBytes: 100_000,
  maxFields: 3,
  maxFieldBytes: 100,
  maxFieldsTotalBytes: 200,
  maxPartHeaderBytes: 1024,
  maxJsonDepth: 64,
};
const timeouts = { idleMs: 10_000, totalMs: 60_000 };
const boundary = 'b0undary';
const body = (...parts: string[]) => `${parts.join('')}--${boundary}--\r\n`;
const filePart = (name: string, data: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.txt"\r\n\r\n${data}\r\n`;
const fieldPart = (name: string, value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;

/** A file store in memory; `failWrites` makes every write fail after reading its source. */
class MemoryFiles implements FileStore {
  readonly files = new Map<string, Buffer>();
  deletedAll: FileOwner[] = [];
  failWrites = false;
  /** An error of the disk, thrown at the first chunk as a disk write would (the source is left mid-way). */
  failWith: NodeJS.ErrnoException | null = null;
  private next = 0;
  async write(owner: FileOwner, source: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const chunks: Buffer[] = [];
    for await (const chunk of source) {
      if (this.failWith) throw this.failWith;
      chunks.push(Buffer.from(chunk));
    }
    if (this.failWrites) throw new Error('ENOSPC: no space left on device');
    const id = `file-${++this.next}`;
    this.files.set(`${owner.id}/${id}`, Buffer.concat(chunks));
    return { id, size: Buffer.concat(chunks).length, sha256: 'x' };
  }
  async read() {
    return null;
  }
  async delete(owner: FileOwner, id: string) {
    return this.files.delete(`${owner.id}/${id}`);
  }
  async deleteAll(owner: FileOwner) {
    this.deletedAll.push(owner);
    for (const key of [...this.files.keys()]) if (key.startsWith(`${owner.id}/`)) this.files.delete(key);
  }
  async deleteBot() {}
  async usedBytes() {
    return [...this.files.values()].reduce((sum, file) => sum + file.length, 0);
  }
  async listOwners() {
    return [];
  }
}

/** Posts `payload` to a server that runs receiveFiles; resolves with what it returned or threw. */
async function receive(files: MemoryFiles, payload: string): Promise<ReceivedRequest | GiError> {
  const logger = { error: jest.fn() };
  let outcome: ReceivedRequest | GiError | undefined;
  const server = createServer((req, res) => {
    receiveFiles(req, { files, limits, timeouts }, { botId: 'bot-a', id: 'inv-1' }, logger).then(
      (received) => ((outcome = received), res.end()),
      (error: GiError) => ((outcome = error), res.end()),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    });
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  return outcome!;
}

describe('receiveFiles', () => {
  it('stores the files and builds RequestBody from the fields', async () => {
    const files = new MemoryFiles();
    const received = await receive(files, body(fieldPart('a', '1'), filePart('doc', 'hello'), fieldPart('a', '2')));
    expect(received).toEqual({
      body: { a: ['1', '2'] },
      files: [{ Id: 'file-1', FileName: 'doc.txt', ContentType: 'text/plain', Size: 5, Sha256: 'x', PartName: 'doc' }],
    });
    expect([...files.files.values()].map(String)).toEqual(['hello']);
  });

  it('answers 503 and removes every file when the file store fails; the cause is logged, not shown', async () => {
    const files = new MemoryFiles();
    files.failWrites = true;
    const error = (await receive(files, body(filePart('doc', 'hello')))) as GiError;
    expect(error).toBeInstanceOf(GiError);
    expect([error.code, error.detail]).toEqual(['unavailable', 'The uploaded files could not be stored; nothing was accepted. Try again.']);
    expect(files.deletedAll).toEqual([{ botId: 'bot-a', id: 'inv-1' }]);
  });

  it.each([
    ['ENOSPC', 'insufficient_storage', 'The service is low on disk space for uploaded files; nothing was stored. Try again later.'],
    ['EDQUOT', 'insufficient_storage', 'The service is low on disk space for uploaded files; nothing was stored. Try again later.'],
    ['EIO', 'unavailable', 'The uploaded files could not be stored; nothing was accepted. Try again.'],
  ])('answers a disk error (%s) mid-file as %s, never naming the errno, and removes every file', async (code, expected, detail) => {
    const files = new MemoryFiles();
    files.failWith = Object.assign(new Error(`${code}: the disk failed, write`), { code, errno: -28, syscall: 'write' });
    const error = (await receive(files, body(filePart('doc', 'x'.repeat(900))))) as GiError;
    expect(error).toBeInstanceOf(GiError);
    expect([error.code, error.detail]).toEqual([expected, detail]);
    expect(JSON.stringify(error)).not.toContain(code);
    expect(files.deletedAll).toEqual([{ botId: 'bot-a', id: 'inv-1' }]);
  });

  it('removes the files already written when a later part breaks a limit', async () => {
    const files = new MemoryFiles();
    const error = (await receive(files, body(filePart('one', 'hello'), fieldPart('big', 'v'.repeat(101))))) as GiError;
    expect([error.code, error.detail]).toEqual(['payload_too_large', 'A form field is larger than the limit of 100 bytes (MAX_FIELD_SIZE).']);
    expect(files.files.size).toBe(0);
  });

  it('answers 400 for a body that ends inside a file', async () => {
    const files = new MemoryFiles();
    const error = (await receive(files, `--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\n\r\nhello`)) as GiError;
    expect([error.code, error.detail]).toEqual(['bad_request', expect.stringMatching(/^The multipart body is malformed \(Unexpected end of (form|file)\); nothing was stored\.$/)]);
    expect(files.files.size).toBe(0);
  });

  it('answers 400 for a refused field followed by a file that never ends (that file stream, left without an error listener, ended the process)', async () => {
    const files = new MemoryFiles();
    const error = (await receive(files, `${fieldPart('', 'x')}--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\n\r\nunfinished`)) as GiError;
    expect([error.code, error.detail]).toEqual(['bad_request', expect.stringContaining('needs a name')]);
    expect(files.files.size).toBe(0);
  });
});
