import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { FileOwner, FileStore, StoredFile } from '@gi/domain';
import { SmallServices } from '@gi/testing';
import type { GatewayDeps } from './gateway.deps';
import { gatewayRouter } from './gateway.router';
import type { Uploads } from './receive-files';

const PATH = '/api/Platform/bot-a/Order/ack/GenericIntegrationFileTransfer';
const boundary = 'b0undary';
const upload = (data: string) => `--${boundary}\r\nContent-Disposition: form-data; name="doc"; filename="doc.txt"\r\n\r\n${data}\r\n--${boundary}--\r\n`;
/** The multipart body around a file of no bytes: what an upload at a limit of N bytes carries beyond N - OVERHEAD bytes of file. */
const OVERHEAD = Buffer.byteLength(upload(''));

/** A file store in memory that notes every owner whose files it was told to remove. */
class MemoryFiles implements FileStore {
  readonly files = new Map<string, Buffer>();
  readonly deletedAll: FileOwner[] = [];
  async write(owner: FileOwner, source: AsyncIterable<Uint8Array>): Promise<StoredFile> {
    const chunks: Buffer[] = [];
    for await (const chunk of source) chunks.push(Buffer.from(chunk));
    const id = `file-${this.files.size + 1}`;
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
  }
  async deleteBot() {}
  async usedBytes() {
    return 0;
  }
  async listOwners() {
    return [];
  }
}

/** The gateway router over in-memory ports, with file uploads of at most `maxUploadBytes` unless `uploads` is null. */
async function gateway(maxUploadBytes: number | null) {
  const world = new SmallServices();
  const { token } = await world.bot();
  const files = new MemoryFiles();
  const uploads: Uploads | undefined =
    maxUploadBytes === null
      ? undefined
      : {
          files,
          limits: { maxFileBytes: 10_000, maxFiles: 3, maxUploadBytes, maxFields: 3, maxFieldBytes: 100, maxFieldsTotalBytes: 200, maxPartHeaderBytes: 1024, maxJsonDepth: 64 },
          timeouts: { idleMs: 10_000, totalMs: 60_000 },
        };
  const deps: GatewayDeps = {
    store: world.store,
    bus: world.bus,
    tokens: world.tokens,
    waiter: world.waiter,
    clock: world.clock,
    logger: world.logger,
    uploads,
    settings: {
      platformSegment: 'Platform',
      platformVersion: [9, 19],
      syncTimeoutMs: 5_000,
      maxBodyBytes: 1024 * 1024,
      bodyTimeouts: { idleMs: 10_000, totalMs: 60_000 },
      maxJsonDepth: 64,
      invocationTtlMs: 3600_000,
      idempotencyKeyTtlMs: 3600_000,
      journalLimits: DEFAULT_JOURNAL_LIMITS,
    },
  };
  const call = world.serve([gatewayRouter(deps)]);
  const post = (body: string, contentType = `multipart/form-data; boundary=${boundary}`) =>
    call({ method: 'POST', path: `${PATH}?asyncResponse=true`, headers: { authorization: `Bearer ${token}`, 'content-type': contentType }, body });
  return { world, files, post };
}

describe('POST .../GenericIntegrationFileTransfer (fileTransferReader)', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('stores an upload of exactly MAX_UPLOAD_SIZE under the invocation and lists its file in RequestFiles', async () => {
    const g = await gateway(OVERHEAD + 5);
    world = g.world;
    const reply = await g.post(upload('hello'));
    expect(reply.status).toBe(202);
    const { invocationId } = JSON.parse(reply.body);
    expect([...g.files.files]).toEqual([[`${invocationId}/file-1`, Buffer.from('hello')]]);
    const stored = await world.store.invocations.get({ botId: 'bot-a', id: invocationId });
    expect(stored?.entity.RequestFiles).toEqual([{ Id: 'file-1', FileName: 'doc.txt', ContentType: 'text/plain', Size: 5, Sha256: 'x', PartName: 'doc' }]);
  });

  it('answers 413 on the declared Content-Length, one byte over the limit, before reading the body: no file written, none to remove', async () => {
    const g = await gateway(OVERHEAD + 4);
    world = g.world;
    const reply = await g.post(upload('hello'));
    expect([reply.status, JSON.parse(reply.body).detail]).toEqual([413, `The upload is larger than the limit of ${OVERHEAD + 4} bytes (MAX_UPLOAD_SIZE).`]);
    expect([g.files.files.size, g.files.deletedAll]).toEqual([0, []]);
    expect(await world.store.invocations.list('bot-a', { limit: 10 })).toEqual([]);
  });

  it('answers 415 to a body that is not multipart/form-data', async () => {
    const g = await gateway(100_000);
    world = g.world;
    const reply = await g.post('{"a":1}', 'application/json');
    expect([reply.status, JSON.parse(reply.body).detail]).toEqual([415, 'GenericIntegrationFileTransfer takes multipart/form-data.']);
  });

  it('answers 501 when this server has no file store', async () => {
    const g = await gateway(null);
    world = g.world;
    const reply = await g.post(upload('hello'));
    expect(reply.status).toBe(501);
    expect(JSON.parse(reply.body)).toMatchObject({ title: 'Not implemented', detail: 'File uploads are not configured on this server.' });
  });
});
