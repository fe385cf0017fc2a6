import { createServer } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { GiError } from '@gi/domain';
import type { FileOwner, FileStore, StoredFile } from '@gi/domain';
import { eventually } from '@gi/testing';
import { receiveFiles } from './receive-files';
import type { ReceivedRequest, UploadLimits, Uploads } from './receive-files';
import { diskLow } from './storage-guard';
import type { StorageGuard } from './storage-guard';

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
  /** A disk slower than the client: each chunk is read a turn of the event loop later. */
  slow = false;
  failDeleteAll = false;
  writes = 0;
  private next = 0;
  async write(owner: FileOwner, source: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    this.writes++;
    const chunks: Buffer[] = [];
    for await (const chunk of source) {
      if (this.failWith) throw this.failWith;
      chunks.push(Buffer.from(chunk));
      if (this.slow) await new Promise((resolve) => setImmediate(resolve));
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
    if (this.failDeleteAll) throw new Error('EIO: the disk failed, unlink');
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

interface Options {
  limits?: Partial<UploadLimits>;
  contentType?: string;
  storage?: Uploads['storage'];
  logger?: { error: jest.Mock };
}

/** A server that runs receiveFiles on the requests it gets; `outcome` is what the first returned or threw. */
async function listening(files: MemoryFiles, options: Options = {}) {
  const logger = options.logger ?? { error: jest.fn() };
  let settle: (outcome: ReceivedRequest | GiError) => void = () => undefined;
  const outcome = new Promise<ReceivedRequest | GiError>((resolve) => (settle = resolve));
  const server = createServer((req, res) => {
    receiveFiles(req, { files, limits: { ...limits, ...options.limits }, timeouts, storage: options.storage }, { botId: 'bot-a', id: 'inv-1' }, logger).then(
      (received) => (settle(received), res.end()),
      (error: GiError) => (settle(error), res.end()),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  return { port: (server.address() as AddressInfo).port, outcome, close };
}

/** Posts `payload` to a server that runs receiveFiles; resolves with what it returned or threw. */
async function receive(files: MemoryFiles, payload: string | Buffer, options: Options = {}): Promise<ReceivedRequest | GiError> {
  const server = await listening(files, options);
  try {
    await fetch(`http://127.0.0.1:${server.port}/`, {
      method: 'POST',
      body: payload,
      headers: { 'content-type': options.contentType ?? `multipart/form-data; boundary=${boundary}` },
    });
    return await server.outcome;
  } finally {
    await server.close();
  }
}

/** A 413 of receiveFiles: its code and detail. */
const tooLarge = (detail: string) => ['payload_too_large', detail];
const refusalOf = (outcome: ReceivedRequest | GiError) => (outcome instanceof GiError ? [outcome.code, outcome.detail] : outcome);

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

  it('takes each limit to the byte: a file, a field, all the fields, the whole upload, the count of files and of fields', async () => {
    const atLimits = body(filePart('f1', 'x'.repeat(1000)), filePart('f2', ''), filePart('f3', 'z'), fieldPart('a', 'v'.repeat(100)), fieldPart('b', 'w'.repeat(100)), fieldPart('c', ''));
    const received = (await receive(new MemoryFiles(), atLimits, { limits: { maxUploadBytes: Buffer.byteLength(atLimits) } })) as ReceivedRequest;
    expect(received.files.map((file) => [file.PartName, file.Size])).toEqual([['f1', 1000], ['f2', 0], ['f3', 1]]);
    expect(received.body).toEqual({ a: 'v'.repeat(100), b: 'w'.repeat(100), c: '' });
  });

  it.each([
    ['a file one byte over', body(filePart('f', 'x'.repeat(1001))), {}, 'A file is larger than the limit of 1000 bytes (MAX_FILE_SIZE).'],
    ['a field one byte over', body(fieldPart('a', 'v'.repeat(101))), {}, 'A form field is larger than the limit of 100 bytes (MAX_FIELD_SIZE).'],
    ['the fields together one byte over', body(fieldPart('a', 'v'.repeat(100)), fieldPart('b', 'w'.repeat(100)), fieldPart('c', 'x')), {}, 'The form fields together are larger than the limit of 200 bytes (MAX_BODY_SIZE).'],
    ['one file too many', body(filePart('f1', 'a'), filePart('f2', 'b'), filePart('f3', 'c'), filePart('f4', 'd')), {}, 'The upload has more than 3 files (MAX_FILES).'],
    ['one field too many', body(fieldPart('a', '1'), fieldPart('b', '2'), fieldPart('c', '3'), fieldPart('d', '4')), {}, 'The upload has more than 3 form fields (MAX_FORM_FIELDS).'],
    ['the whole upload one byte over', body(filePart('f', 'x'.repeat(500))), { maxUploadBytes: Buffer.byteLength(body(filePart('f', 'x'.repeat(500)))) - 1 }, 'The upload is larger than the limit of 589 bytes (MAX_UPLOAD_SIZE).'],
    ['a part header over MAX_PART_HEADER_SIZE', body(filePart(`f${'h'.repeat(1024)}`, 'x')), {}, "A part's headers are larger than the limit of 1024 bytes (MAX_PART_HEADER_SIZE)."],
  ])('answers 413 for %s and removes what was written', async (_case, payload, limitsOf: Partial<UploadLimits>, detail) => {
    const files = new MemoryFiles();
    const outcome = await receive(files, payload, { limits: limitsOf });
    expect(outcome).toBeInstanceOf(GiError);
    expect(refusalOf(outcome)).toEqual(tooLarge(detail));
    expect((outcome as GiError).title).toBe('Payload too large');
    expect([files.files.size, files.deletedAll]).toEqual([0, [{ botId: 'bot-a', id: 'inv-1' }]]);
  });

  it('answers 413 for more parts than files and fields together allow, when the parser counts them as parts only', async () => {
    const outcome = await receive(new MemoryFiles(), body(filePart('f1', 'a'), filePart('f2', 'b'), filePart('f3', 'c'), fieldPart('a', '1'), fieldPart('b', '2'), fieldPart('c', '3')), { limits: { maxFiles: 3, maxFields: 3 } });
    expect((outcome as ReceivedRequest).files).toHaveLength(3);
  });

  it('finds the boundary however the Content-Type spells it: a header over the limit is refused, a file with a near-delimiter accepted', async () => {
    const oversized = `--${boundary}\r\nContent-Disposition: form-data; name="f${'h'.repeat(1100)}"\r\n\r\nx\r\n--${boundary}--\r\n`;
    // Only the whole boundary ends a part: read with a wrong one, this file would start a header over the limit.
    const nearDelimiter = body(filePart('doc', `\r\n--${boundary.slice(0, 5)}${'h'.repeat(1100)}`));
    for (const contentType of [
      `multipart/form-data;boundary=${boundary}`,
      `multipart/form-data; boundary="${boundary}"`,
      `multipart/form-data; BOUNDARY=${boundary}; charset=utf-8`,
      `multipart/form-data; charset=utf-8;  boundary=${boundary}`,
    ]) {
      const refused = await receive(new MemoryFiles(), oversized, { contentType });
      expect([contentType, refusalOf(refused)]).toEqual([contentType, tooLarge("A part's headers are larger than the limit of 1024 bytes (MAX_PART_HEADER_SIZE).")]);
      const accepted = await receive(new MemoryFiles(), nearDelimiter, { contentType, limits: { maxFileBytes: 2000 } });
      expect([contentType, (accepted as ReceivedRequest).files?.[0]?.Size]).toEqual([contentType, 1109]);
    }
  });

  it('refuses a field the guard takes for a file (an empty filename) once the parser finds it too large', async () => {
    const part = (value: string) => `--${boundary}\r\nContent-Disposition: form-data; name="a"; filename=""\r\n\r\n${value}\r\n`;
    expect(((await receive(new MemoryFiles(), body(part('v'.repeat(100))))) as ReceivedRequest).body).toEqual({ a: 'v'.repeat(100) });
    expect(refusalOf(await receive(new MemoryFiles(), body(part('v'.repeat(101)))))).toEqual(tooLarge('A form field is larger than the limit of 100 bytes (MAX_FIELD_SIZE).'));
  });

  it('skips a file input left empty (no file name, no bytes) but keeps a named empty file and an unnamed one with bytes', async () => {
    const files = new MemoryFiles();
    const octets = (disposition: string, data: string) => `--${boundary}\r\nContent-Disposition: ${disposition}\r\nContent-Type: application/octet-stream\r\n\r\n${data}\r\n`;
    const received = (await receive(files, body(octets('form-data; name="empty"; filename=""', ''), filePart('named', ''), octets('form-data', 'abc')))) as ReceivedRequest;
    expect(received.files).toEqual([
      { Id: 'file-2', FileName: 'named.txt', ContentType: 'text/plain', Size: 0, Sha256: 'x', PartName: 'named' },
      { Id: 'file-3', FileName: '', ContentType: 'application/octet-stream', Size: 3, Sha256: 'x', PartName: '' },
    ]);
    expect([...files.files.keys()]).toEqual(['inv-1/file-2', 'inv-1/file-3']);
  });

  it('reads file names as UTF-8', async () => {
    const payload = Buffer.from(body(`--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="résumé.txt"\r\n\r\nhi\r\n`), 'utf8');
    expect(((await receive(new MemoryFiles(), payload)) as ReceivedRequest).files[0].FileName).toBe('résumé.txt');
  });

  it('answers 400 to a multipart Content-Type without a boundary', async () => {
    expect(refusalOf(await receive(new MemoryFiles(), body(filePart('doc', 'x')), { contentType: 'multipart/form-data' }))).toEqual([
      'bad_request',
      'The multipart body cannot be read: Multipart: Boundary not found.',
    ]);
  });

  it('answers 400 to an upload cut off before its end, and removes what was written', async () => {
    const files = new MemoryFiles();
    const server = await listening(files);
    try {
      const socket = connect(server.port, '127.0.0.1');
      const start = `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="doc.txt"\r\n\r\nhello`;
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000\r\n\r\n${start}`);
      // Cut off once the file's write has begun: there is something to remove.
      await eventually(() => files.writes === 1);
      socket.destroy();
      expect(refusalOf(await server.outcome)).toEqual(['bad_request', 'The upload was aborted before its end; nothing was stored.']);
      expect(files.deletedAll).toEqual([{ botId: 'bot-a', id: 'inv-1' }]);
    } finally {
      await server.close();
    }
  });

  it('removes the files once, with the first failure, however many follow', async () => {
    const files = new MemoryFiles();
    // One chunk: the parser reports the fifth field, then each file beyond the third, before the upload is torn down.
    const payload = body(...['a', 'b', 'c', 'd', 'e'].map((name) => fieldPart(name, '1')), ...['f1', 'f2', 'f3', 'f4', 'f5'].map((name) => filePart(name, 'x')));
    expect(refusalOf(await receive(files, payload, { limits: { maxFields: 4 } }))).toEqual(tooLarge('The upload has more than 4 form fields (MAX_FORM_FIELDS).'));
    expect(files.deletedAll).toEqual([{ botId: 'bot-a', id: 'inv-1' }]);
  });

  it('still answers the failure when removing the files fails', async () => {
    const files = new MemoryFiles();
    files.failDeleteAll = true;
    expect(refusalOf(await receive(files, body(filePart('f', 'x'.repeat(1001)))))).toEqual(tooLarge('A file is larger than the limit of 1000 bytes (MAX_FILE_SIZE).'));
  });

  it('starts no write for a file that follows a refused part', async () => {
    const files = new MemoryFiles();
    const outcome = await receive(files, body(fieldPart('', 'x'), filePart('doc', 'hello')));
    expect(refusalOf(outcome)).toEqual(['bad_request', expect.stringContaining('needs a name')]);
    expect(files.writes).toBe(0);
  });

  it('waits for a file store slower than the client, and stores every byte', async () => {
    const files = new MemoryFiles();
    files.slow = true;
    const data = 'abcdefgh'.repeat(64 * 1024);
    const received = (await receive(files, body(filePart('big', data)), { limits: { maxFileBytes: data.length, maxUploadBytes: 1024 * 1024 } })) as ReceivedRequest;
    expect(received.files[0].Size).toBe(data.length);
    expect(files.files.get('inv-1/file-1')?.equals(Buffer.from(data))).toBe(true);
  });

  it('logs a failed write of the file store once, with its cause and the invocation, and answers 503 with Retry-After', async () => {
    const files = new MemoryFiles();
    files.failWrites = true;
    const logger = { error: jest.fn() };
    const outcome = (await receive(files, body(filePart('one', 'a'), filePart('two', 'b')), { logger })) as GiError;
    expect([outcome.title, outcome.headers]).toEqual(['Service unavailable', { 'Retry-After': '5' }]);
    expect(logger.error.mock.calls).toEqual([[{ err: expect.objectContaining({ message: 'ENOSPC: no space left on device' }), invocationId: 'inv-1' }, 'file store write failed']]);
  });

  it('answers 503 to a store failure without an errno mid-file (a database connection lost), logs it and never shows it', async () => {
    const files = new MemoryFiles();
    files.failWith = Object.assign(new Error('connection 3 to 10.0.0.7:27017 closed'), { name: 'MongoNetworkError' });
    const logger = { error: jest.fn() };
    const outcome = await receive(files, body(filePart('doc', 'x'.repeat(900))), { logger });
    expect(refusalOf(outcome)).toEqual(['unavailable', 'The uploaded files could not be stored; nothing was accepted. Try again.']);
    expect(JSON.stringify(outcome)).not.toContain('27017');
    expect(logger.error).toHaveBeenCalledWith({ err: files.failWith, invocationId: 'inv-1' }, 'file store write failed');
    expect(files.deletedAll).toEqual([{ botId: 'bot-a', id: 'inv-1' }]);
  });

  it('passes on a GiError of the file store mid-file as it is', async () => {
    const files = new MemoryFiles();
    files.failWith = diskLow() as unknown as NodeJS.ErrnoException;
    const outcome = await receive(files, body(filePart('doc', 'x')));
    expect(refusalOf(outcome)).toEqual(['insufficient_storage', 'The service is low on disk space for uploaded files; nothing was stored. Try again later.']);
    expect((outcome as GiError).headers).toEqual({ 'Retry-After': '60' });
  });

  it('counts each chunk against the storage guard, refuses with its answer, and gives back the space of a failed upload only', async () => {
    const ends: boolean[] = [];
    const taken: number[] = [];
    let room = Number.POSITIVE_INFINITY;
    const storage = {
      open: async () => ({
        take: (bytes: number) => (taken.push(bytes), (room -= bytes) < 0 ? diskLow() : null),
        end: (stored: boolean) => void ends.push(stored),
      }),
    } as unknown as StorageGuard;
    const payload = body(filePart('doc', 'hello'));
    expect(await receive(new MemoryFiles(), payload, { storage })).toMatchObject({ files: [{ Size: 5 }] });
    expect([ends, taken.reduce((a, b) => a + b, 0)]).toEqual([[true], Buffer.byteLength(payload)]);
    room = 10;
    const files = new MemoryFiles();
    expect(refusalOf(await receive(files, payload, { storage }))).toEqual(['insufficient_storage', 'The service is low on disk space for uploaded files; nothing was stored. Try again later.']);
    expect([ends, files.writes]).toEqual([[true, false], 0]);
  });
});
