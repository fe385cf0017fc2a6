import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api, send } from './api-client';
import type { Reply } from './api-client';
import { example } from './connectors';
import { MULTIPART, multipartBody, streamUpload } from './multipart';
import type { Part } from './multipart';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** Replies with what the service stored: RequestBody and RequestFiles. */
const listing = `
const entity = Context.GetRequestEntity();
entity.ResponseBody = { body: entity.RequestBody, files: entity.RequestFiles };
Context.SetResponseEntity(entity);
`;

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
const FILE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Every regular file under DATA_DIR/files, as paths relative to it. */
function storedFiles(dataDir: string): string[] {
  const root = join(dataDir, 'files');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name).slice(root.length + 1));
}

/** Waits until DATA_DIR/files holds `count` files (cleanup after a failed upload finishes just after the reply). */
async function settleFiles(dataDir: string, count = 0): Promise<string[]> {
  for (let i = 0; i < 50 && storedFiles(dataDir).length !== count; i++) await new Promise((resolve) => setTimeout(resolve, 100));
  return storedFiles(dataDir);
}

/** The resident memory of a process, in bytes. */
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

describe('GenericIntegrationFileTransfer (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const url = (integration: string, query = '') => api.webhookUrl('acme', 'Doc', integration, query, 'GenericIntegrationFileTransfer');
  const upload = (integration: string, parts: Part[], query = ''): Promise<Reply> =>
    api.call(url(integration, query), token, { body: multipartBody(parts), headers: { 'content-type': MULTIPART } });

  beforeAll(async () => {
    service = await startService({ env: { MAX_FILE_SIZE: '2gb', MAX_UPLOAD_SIZE: '2gb', BOT_STORAGE_QUOTA: '4gb' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Doc', 'files', example('files'));
    expect((await api.admin('PUT', '/bots/acme/integrations/listing', { entityName: 'Doc', code: listing })).status).toBe(200);
  });
  afterAll(() => service.dispose());

  const invoice = Buffer.from(Array.from({ length: 150_000 }, (_, i) => (i * 7919) & 255));
  const notes = Buffer.from('line 1\nline 2\n'.repeat(1000));
  const twoFilesAndFields: Part[] = [
    { name: 'orderId', data: '42' },
    { name: 'tag', data: 'a' },
    { name: 'invoice', filename: 'invoice.pdf', contentType: 'application/pdf', data: invoice },
    { name: 'tag', data: 'b' },
    { name: 'meta', contentType: 'application/json', data: '{"pages":3}' },
    { name: 'notes', filename: 'notes.txt', contentType: 'text/plain', data: notes },
  ];
  const expectedReply = {
    Fields: { orderId: '42', tag: ['a', 'b'], meta: { pages: 3 } },
    Files: [
      { PartName: 'invoice', FileName: 'invoice.pdf', ContentType: 'application/pdf', Size: invoice.length, Sha256: sha256(invoice), Verified: true },
      { PartName: 'notes', FileName: 'notes.txt', ContentType: 'text/plain', Size: notes.length, Sha256: sha256(notes), Verified: true },
    ],
  };

  it('stores two files and the fields; the connector reads the files and verifies their sizes and SHA-256', async () => {
    const reply = await upload('files', twoFilesAndFields, 'source=crm');
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual(expectedReply);
    const id = reply.headers.get('x-invocation-id');
    const shown = await api.admin('GET', `/bots/acme/invocations/${id}`);
    expect(shown.json.entity).toMatchObject({ RequestParams: 'source=crm', RequestBody: expectedReply.Fields });
    expect(shown.json.entity.RequestFiles.map((f: { Id: string }) => f.Id)).toEqual([expect.stringMatching(FILE_ID), expect.stringMatching(FILE_ID)]);
  });

  it('runs asynchronously and answers the poll with the same body', async () => {
    const started = await upload('files', twoFilesAndFields, 'asyncResponse=true');
    expect(started.status).toBe(202);
    expect(started.json).toEqual({ invocationId: expect.any(String), status: 'Running' });
    expect(started.headers.get('location')).toContain(`GetGenericIntegrationResponse?invocationId=${started.json.invocationId}`);
    const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=30');
    expect(polled.status).toBe(200);
    expect(polled.json).toEqual(expectedReply);
  });

  it('answers 415 for bodies that are not multipart, and 400 for a malformed one, storing nothing', async () => {
    const before = storedFiles(service.dataDir).length;
    expect((await api.postJson(url('listing'), token, { a: 1 })).status).toBe(415);
    expect((await api.call(url('listing'), token, { body: 'x', headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    const noBoundary = await api.call(url('listing'), token, { body: 'x', headers: { 'content-type': 'multipart/form-data' } });
    expect([noBoundary.status, noBoundary.json.detail]).toEqual([400, expect.stringContaining('Boundary not found')]);
    const cut = multipartBody([{ name: 'f', filename: 'a.txt', data: 'hello world' }]).subarray(0, -20);
    const truncated = await api.call(url('listing'), token, { body: cut, headers: { 'content-type': MULTIPART } });
    expect([truncated.status, truncated.json.type]).toEqual([400, 'urn:gi:problem:bad-request']);
    expect(await settleFiles(service.dataDir, before)).toHaveLength(before);
  });

  it('checks the token before reading any of the body, and stores nothing', async () => {
    const before = storedFiles(service.dataDir).length;
    const reply = await streamUpload(url('listing'), { token: 'not-a-token', fileBytes: 16 * 1024 * 1024 });
    expect(reply.status).toBe(401);
    expect(storedFiles(service.dataDir)).toHaveLength(before);
  });

  it('keeps traversal file names as data only: files are stored under generated names', async () => {
    const before = storedFiles(service.dataDir);
    const topLevel = readdirSync(service.dataDir).sort();
    const reply = await upload('listing', [
      { name: 'a', filename: '../../etc/passwd', data: 'root:x:0:0' },
      { name: 'b', filename: '..\\..\\windows\\win.ini', data: 'ini' },
      { name: 'c', filename: '..', data: 'dots' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.json.files.map((f: { FileName: string }) => f.FileName)).toEqual(['passwd', 'win.ini', '']);
    const added = storedFiles(service.dataDir).filter((path) => !before.includes(path));
    expect(added).toHaveLength(3);
    for (const path of added) expect(path).toMatch(new RegExp(`^acme/[0-9a-f-]{36}/${FILE_ID.source.slice(1, -1)}$`));
    expect(readdirSync(service.dataDir).sort()).toEqual(topLevel);
  });

  it('keeps a named empty file (Size 0) and skips an empty file input sent without a name', async () => {
    const reply = await upload('listing', [
      { name: 'empty', filename: 'empty.txt', contentType: 'text/plain', data: '' },
      { name: 'unused', filename: '', contentType: 'application/octet-stream', data: '' },
    ]);
    expect(reply.status).toBe(200);
    expect(reply.json).toEqual({
      body: {},
      files: [{ Id: expect.stringMatching(FILE_ID), FileName: 'empty.txt', ContentType: 'text/plain', Size: 0, Sha256: sha256(Buffer.alloc(0)), PartName: 'empty' }],
    });
  });

  it('leaves nothing behind when the client hangs up mid-upload', async () => {
    const before = storedFiles(service.dataDir).length;
    const invocations = (await api.admin('GET', '/bots/acme/invocations?limit=100')).json.invocations.length;
    const reply = await streamUpload(url('listing'), { token, fileBytes: 64 * 1024 * 1024, abortAfter: 8 * 1024 * 1024 });
    expect(reply.status).toBe(0);
    expect(await settleFiles(service.dataDir, before)).toHaveLength(before);
    expect((await api.admin('GET', '/bots/acme/invocations?limit=100')).json.invocations).toHaveLength(invocations);
  });

  it('streams a 1 GiB upload to disk while the service grows by less than 100 MB', async () => {
    const pid = service.child.pid!;
    const baseline = rssOf(pid);
    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 20);
    let reply;
    try {
      reply = await streamUpload(url('listing'), { token, fileBytes: 1024 * 1024 * 1024 });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssOf(pid));
    expect(reply.status).toBe(200);
    expect(reply.json.files).toEqual([expect.objectContaining({ FileName: 'big.bin', Size: 1024 ** 3, Sha256: reply.sha256 })]);
    const growthMb = (peak - baseline) / 1e6;
    const mbPerSecond = 1024 ** 3 / 1e6 / (reply.elapsedMs / 1000);
    process.stdout.write(`1 GiB upload: ${mbPerSecond.toFixed(0)} MB/s, service RSS ${(baseline / 1e6).toFixed(0)} -> ${(peak / 1e6).toFixed(0)} MB (+${growthMb.toFixed(0)} MB)\n`);
    expect(growthMb).toBeLessThan(100);
  }, 60_000);
});

describe('GenericIntegrationFileTransfer limits (413)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  const url = () => api.webhookUrl('acme', 'Doc', 'listing', '', 'GenericIntegrationFileTransfer');

  beforeAll(async () => {
    service = await startService({
      env: {
        MAX_FILE_SIZE: '64kb',
        MAX_FILES: '2',
        MAX_UPLOAD_SIZE: '1mb',
        MAX_FORM_FIELDS: '3',
        MAX_FIELD_SIZE: '1kb',
        MAX_BODY_SIZE: '2kb',
        MAX_PART_HEADER_SIZE: '1kb',
      },
    });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Doc', 'listing', listing);
  });
  afterAll(() => service.dispose());

  const file = (name: string, size: number): Part => ({ name, filename: `${name}.bin`, data: Buffer.alloc(size, 1) });
  const field = (name: string, size = 10): Part => ({ name, data: 'v'.repeat(size) });

  it('accepts an upload right at every limit', async () => {
    const parts = [file('a', 64 * 1024), file('b', 1), field('x', 1024), field('y', 1000), field('z', 1)];
    const reply = await send(url(), { method: 'POST', body: multipartBody(parts), headers: { authorization: `Bearer ${token}`, 'content-type': MULTIPART } });
    expect(reply.status).toBe(200);
    expect(reply.json.files.map((f: { Size: number }) => f.Size)).toEqual([65536, 1]);
  });

  it.each([
    ['a file over MAX_FILE_SIZE', [file('a', 10), file('b', 64 * 1024 + 1)], /file is larger than the limit of 65536 bytes \(MAX_FILE_SIZE\)/],
    ['more files than MAX_FILES', [file('a', 10), file('b', 10), file('c', 10)], /more than 2 files \(MAX_FILES\)/],
    ['more fields than MAX_FORM_FIELDS', [file('a', 100), field('w'), field('x'), field('y'), field('z')], /more than 3 form fields \(MAX_FORM_FIELDS\)/],
    ['a field over MAX_FIELD_SIZE', [file('a', 100), field('x', 1025)], /form field is larger than the limit of 1024 bytes \(MAX_FIELD_SIZE\)/],
    ['fields together over MAX_BODY_SIZE', [file('a', 100), field('x', 1000), field('y', 1000), field('z', 100)], /form fields together are larger than the limit of 2048 bytes/],
    [
      'a part header over MAX_PART_HEADER_SIZE',
      [file('a', 100), { name: 'h', filename: 'h.txt', headers: [`X-Padding: ${'p'.repeat(1100)}`], data: 'x' }],
      /headers are larger than the limit of 1024 bytes \(MAX_PART_HEADER_SIZE\)/,
    ],
  ])('answers 413 for %s and leaves no files', async (_case, parts: Part[], detail: RegExp) => {
    const reply = await send(url(), { method: 'POST', body: multipartBody(parts), headers: { authorization: `Bearer ${token}`, 'content-type': MULTIPART } });
    expect(reply.status).toBe(413);
    expect(reply.json).toMatchObject({ type: 'urn:gi:problem:payload-too-large', detail: expect.stringMatching(detail) });
    expect(await settleFiles(service.dataDir, 2)).toHaveLength(2);
  });

  it('answers 413 at once for a Content-Length over MAX_UPLOAD_SIZE, and mid-stream for a chunked body', async () => {
    const declared = await streamUpload(url(), { token, fileBytes: 50 * 1024 * 1024 });
    expect([declared.status, declared.json.detail]).toEqual([413, expect.stringContaining('MAX_UPLOAD_SIZE')]);
    const chunked = await streamUpload(url(), { token, fileBytes: 50 * 1024 * 1024, contentLength: false, before: [field('note')] });
    expect([chunked.status, chunked.json.detail]).toEqual([413, expect.stringContaining('MAX_FILE_SIZE')]);
    // The service stopped reading at the limit: far less than the 50 MiB was taken off the wire.
    expect(chunked.sentAtReply).toBeLessThan(24 * 1024 * 1024);
    expect(await settleFiles(service.dataDir, 2)).toHaveLength(2);
  });

  it('answers 413 mid-stream when a chunked body passes MAX_UPLOAD_SIZE', async () => {
    // Every part is within its limits; bytes after the closing delimiter make the body too large.
    const reply = await streamUpload(url(), { token, fileBytes: 1000, contentLength: false, epilogueBytes: 8 * 1024 * 1024 });
    expect([reply.status, reply.json.detail]).toEqual([413, expect.stringContaining('MAX_UPLOAD_SIZE')]);
    expect(await settleFiles(service.dataDir, 2)).toHaveLength(2);
  });

  it('accepted none of the refused uploads', async () => {
    expect((await api.admin('GET', '/bots/acme/invocations?limit=100')).json.invocations).toHaveLength(1);
  });
});
