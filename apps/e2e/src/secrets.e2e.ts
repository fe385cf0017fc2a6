import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Api, type Reply } from './api-client';
import { CallbackReceiver, type Delivery } from './callback-receiver';
import { TEST_AMQP_URL } from '@gi/testing';
import { startService, type ServiceProcess } from './service-process';

/** The value under test: long and unlike anything else the service writes. */
const VALUE = `sk_live_${randomBytes(12).toString('hex')}`;
const SHARED = `shared_${randomBytes(12).toString('hex')}`;

/** A connector calling a mock API with its secret, logging it (redacted), and raising it in an error on request. */
const CONNECTOR = `
const e = Context.GetRequestEntity();
const key = Context.Secrets.API_KEY;
Context.Log('calling with ' + key + ' and ' + Context.Secrets.SHARED);
Context.SetProgress(10, 'key ' + key);
const reply = await Context.Http.Request({ url: e.RequestBody.api + '/orders', headers: { Authorization: 'Bearer ' + key } });
if (e.RequestBody.fail) Context.RaiseError('Refused with ' + key, 'the key ' + key + ' was refused');
e.ResponseBody = { status: reply.status, names: Object.keys(Context.Secrets).sort() };
Context.SetResponseEntity(e);
`;

/** Every file under `dir`, as raw bytes (the SQLite file, its -wal and -shm, uploaded files...). */
function filesUnder(dir: string): Array<{ path: string; bytes: Buffer }> {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [{ path, bytes: readFileSync(path) }];
  });
}

describe('connector secrets in the embedded service', () => {
  let service: ServiceProcess;
  let mock: Server;
  let mockBase: string;
  const authorizations: string[] = [];
  const replies: Reply[] = [];

  beforeAll(async () => {
    mock = createServer((req, res) => {
      authorizations.push(req.headers.authorization ?? '');
      const ok = req.headers.authorization === `Bearer ${VALUE}`;
      res.writeHead(ok ? 200 : 401, { 'content-type': 'application/json' }).end(JSON.stringify({ ok }));
    });
    await new Promise<void>((resolve) => mock.listen(0, '127.0.0.1', resolve));
    mockBase = `http://127.0.0.1:${(mock.address() as AddressInfo).port}`;
    service = await startService({ env: { SECRETS_KEY: randomBytes(32).toString('base64'), CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', LOG_LEVEL: 'debug' } });
  }, 60_000);
  afterAll(async () => {
    await service?.dispose();
    await new Promise((resolve) => mock?.close(resolve));
  });

  it('hands the secret to the connector, and it never appears in the store files, the logs, any reply or the invocation', async () => {
    const api = new Api(service.baseUrl);
    const keep = async (reply: Promise<Reply>) => {
      const r = await reply;
      replies.push(r);
      return r;
    };
    const token = await api.setUp('acme', 'Order', 'crm', CONNECTOR, { allowedHosts: ['127.0.0.1'], timeoutSeconds: 30 });
    expect((await keep(api.admin('PUT', '/bots/acme/integrations/crm/secrets/API_KEY', { value: 'first-value-to-rotate' }))).status).toBe(201);
    // Rotation: set again.
    expect((await keep(api.admin('PUT', '/bots/acme/integrations/crm/secrets/API_KEY', { value: VALUE }))).status).toBe(200);
    expect((await keep(api.admin('PUT', '/bots/acme/secrets/SHARED', { value: SHARED }))).status).toBe(201);
    expect((await keep(api.admin('GET', '/bots/acme/integrations/crm/secrets'))).json.secrets).toEqual([
      { name: 'API_KEY', createdAt: expect.any(String), updatedAt: expect.any(String) },
    ]);
    expect((await keep(api.admin('GET', '/bots/acme/secrets'))).json.secrets.map((s: { name: string }) => s.name)).toEqual(['SHARED']);

    const url = api.webhookUrl('acme', 'Order', 'crm');
    const ok = await keep(api.postJson(url, token, { api: mockBase }));
    expect(ok).toMatchObject({ status: 200, json: { status: 200, names: ['API_KEY', 'SHARED'] } });
    expect(authorizations).toEqual([`Bearer ${VALUE}`]);

    const raised = await keep(api.postJson(url, token, { api: mockBase, fail: true }));
    expect(raised).toMatchObject({ status: 422, json: { title: 'Refused with [secret]', detail: 'the key [secret] was refused' } });

    const async = await keep(api.postJson(api.webhookUrl('acme', 'Order', 'crm', 'asyncResponse=true'), token, { api: mockBase }));
    const invocationId = async.json.invocationId as string;
    expect((await keep(api.poll('acme', token, invocationId, 'waitSeconds=20'))).status).toBe(200);
    const stored = await keep(api.admin('GET', `/bots/acme/invocations/${invocationId}`));
    expect(stored.json.logs.map((l: { message: string }) => l.message)).toEqual(['calling with [secret] and [secret]']);
    expect(stored.json.progress).toMatchObject({ message: 'key [secret]' });
    const listed = await keep(api.admin('GET', '/bots/acme/invocations?limit=100'));
    expect(listed.json.invocations.length).toBeGreaterThanOrEqual(3);

    // Nothing the service wrote holds a value: the store files read raw while it runs (the -wal with
    // them) and once it stopped (checkpointed), its log output, every reply.
    const whileRunning = filesUnder(service.dataDir);
    expect(whileRunning.some((f) => f.path.endsWith('store.db-wal'))).toBe(true);
    await service.stop();
    const files = [...whileRunning, ...filesUnder(service.dataDir)];
    expect(files.some((f) => f.path.endsWith('store.db'))).toBe(true);
    for (const { path, bytes } of files) {
      for (const secret of [VALUE, SHARED, 'first-value-to-rotate']) expect({ path, holds: bytes.includes(Buffer.from(secret)) }).toEqual({ path, holds: false });
    }
    const output = service.output.join('\n');
    expect(output).toContain('"msg":"listening"');
    expect(output).not.toContain(VALUE);
    expect(output).not.toContain(SHARED);
    for (const reply of replies) {
      expect(reply.text).not.toContain(VALUE);
      expect(reply.text).not.toContain(SHARED);
    }
  }, 90_000);
});

/** Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>` keyed with the secret's bytes. */
function signedWith(secret: string, delivery: Delivery): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const expected = createHmac('sha256', key).update(`${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`).digest('base64');
  return String(delivery.headers['webhook-signature']).split(' ').includes(`v1,${expected}`);
}

describe('callback signing secrets under SECRETS_KEY', () => {
  it('are sealed once a key is set (one stored in clear before is sealed at start) and still sign callbacks', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gi-e2e-signing-'));
    const receiver = await CallbackReceiver.start();
    const env = { CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1', CALLBACK_RETRY_SECONDS: '1' };
    try {
      // Before SECRETS_KEY: the signing secret is stored in clear, as it always was. The distributed
      // control service on the same store, as the embedded one generates a SECRETS_KEY when none is set.
      const before = await startService({ command: 'control', dataDir, env: { ...env, AMQP_URL: TEST_AMQP_URL, BUS_PREFIX: `gi-signing-${process.pid}` } });
      const api = new Api(before.baseUrl);
      const token = await api.setUp('acme', 'Order', 'ack', 'Context.SetResponseEntity({ ResponseBody: { ok: true } });');
      const secret = (await api.admin('POST', '/bots/acme/callback-secret')).json.secret as string;
      await before.stop();
      expect(filesUnder(dataDir).some(({ bytes }) => bytes.includes(Buffer.from(secret)))).toBe(true);

      // With a key: sealed at start, and callbacks are still signed with it.
      const after = await startService({ dataDir, env: { ...env, SECRETS_KEY: randomBytes(32).toString('base64') } });
      try {
        const again = new Api(after.baseUrl);
        const started = await again.postJson(again.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, {}, { 'Callback-Url': receiver.url('/hooks/sealed') });
        expect(started.status).toBe(202);
        const [delivery] = await receiver.received('/hooks/sealed');
        expect(signedWith(secret, delivery)).toBe(true);
        // A new secret is stored sealed too.
        const rotated = (await again.admin('POST', '/bots/acme/callback-secret')).json.secret as string;
        await after.stop();
        for (const { path, bytes } of filesUnder(dataDir)) {
          expect({ path, holds: bytes.includes(Buffer.from(secret)) || bytes.includes(Buffer.from(rotated)) }).toEqual({ path, holds: false });
        }
      } finally {
        await after.dispose();
      }
    } finally {
      await receiver.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 90_000);
});
