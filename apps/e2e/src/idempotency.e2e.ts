import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Api } from './api-client';
import type { Reply } from './api-client';
import { busy, example, raises } from './connectors';
import { gated, openGate, until } from './gate';
import type { Gate } from './gate';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/** Replies with what the service stored of a file transfer. */
const listing = `
const entity = Context.GetRequestEntity();
entity.ResponseBody = { body: entity.RequestBody, files: entity.RequestFiles.map((f) => f.Sha256) };
Context.SetResponseEntity(entity);
`;

/** Every file under DATA_DIR/files. */
function storedFiles(dataDir: string): string[] {
  const root = join(dataDir, 'files');
  if (!existsSync(root)) return [];
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => entry.name);
}

/** The invocationId a reply names: in its 202 body, its problem document, or its X-Invocation-Id header. */
const invocationIdOf = (reply: Reply): string | undefined => reply.json?.invocationId ?? reply.headers.get('x-invocation-id') ?? undefined;

describe('Idempotency-Key (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  let syncGate: Gate;
  const url = (integration: string, query = '') => api.webhookUrl('acme', 'Order', integration, query);
  const post = (integration: string, query: string, body: unknown, key?: string, headers: Record<string, string> = {}) =>
    api.postJson(url(integration, query), token, body, { ...(key === undefined ? {} : { 'Idempotency-Key': key }), ...headers });
  const invocationsOf = async (integrationId: string, botId = 'acme') =>
    (await api.admin('GET', `/bots/${botId}/invocations?integrationId=${integrationId}&limit=500`)).json.invocations as Array<{ id: string; status: string }>;

  beforeAll(async () => {
    syncGate = await openGate();
    service = await startService({ env: { IDEMPOTENCY_KEY_TTL_SECONDS: '3', SYNC_TIMEOUT_SECONDS: '20', CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    const gatedCode = { entityName: 'Order', code: gated(syncGate.port), allowedHosts: ['127.0.0.1'] };
    expect((await api.admin('PUT', '/bots/acme/integrations/gated-sync', gatedCode)).status).toBe(200);
    for (const id of ['busy', 'race', 'race-sync', 'expiring', 'checked']) {
      expect((await api.admin('PUT', `/bots/acme/integrations/${id}`, { entityName: 'Order', code: busy })).status).toBe(200);
    }
    expect((await api.admin('PUT', '/bots/acme/integrations/raises', { entityName: 'Order', code: raises })).status).toBe(200);
    expect((await api.admin('PUT', '/bots/acme/entities/Doc', {})).status).toBe(200);
    expect((await api.admin('PUT', '/bots/acme/integrations/listing', { entityName: 'Doc', code: listing })).status).toBe(200);
  });
  afterAll(async () => {
    syncGate?.server.close();
    await service.dispose();
  });

  it('async: the first request runs; a repeat in flight gets 409 with the invocationId; once done a repeat gets the outcome, no new run', async () => {
    const first = await post('busy', 'asyncResponse=true&ms=1500', { orderId: 1 }, '"async-1"');
    expect(first.status).toBe(202);
    const id = first.json.invocationId;

    const inFlight = await post('busy', 'asyncResponse=true&ms=1500', { orderId: 1 }, '"async-1"');
    expect(inFlight.status).toBe(409);
    expect(inFlight.headers.get('content-type')).toBe('application/problem+json');
    expect(inFlight.json).toMatchObject({ type: 'urn:gi:problem:idempotency-key-in-use', status: 409, invocationId: id });
    expect(inFlight.headers.get('location')).toBe(`/api/Platform/acme/GetGenericIntegrationResponse?invocationId=${id}`);

    expect((await api.poll('acme', token, id, 'waitSeconds=20')).status).toBe(200);
    const done = await post('busy', 'asyncResponse=true&ms=1500', { orderId: 1 }, '"async-1"');
    expect([done.status, done.json, done.headers.get('x-invocation-id')]).toEqual([200, { done: true, ms: 1500 }, id]);
    expect((await invocationsOf('busy')).map((i) => i.id)).toEqual([id]);
  });

  it('sync: a repeat in flight waits for the original\'s result like the first caller; a later repeat gets it at once', async () => {
    // The original runs until the gate opens; the gate opens only once the repeat waits for it (a waiter
    // other than the original's caller marks the stored invocation watched).
    const first = post('gated-sync', '', { orderId: 2 }, 'sync-1');
    await until(() => syncGate.arrived() === 1, 15_000, 'the original run at the gate');
    const repeat = post('gated-sync', '', { orderId: 2 }, 'sync-1');
    const store = new Database(join(service.dataDir, 'store.db'), { readonly: true });
    try {
      const watched = store.prepare("SELECT watched FROM invocations WHERE integration_id = 'gated-sync'").pluck();
      await until(() => watched.get() === 1, 15_000, 'the repeat waiting for the original');
    } finally {
      store.close();
    }
    syncGate.open();
    const [original, repeated] = await Promise.all([first, repeat]);
    expect([original.status, original.json]).toEqual([200, { done: true }]);
    expect([repeated.status, repeated.json]).toEqual([200, { done: true }]);
    const id = original.headers.get('x-invocation-id');
    expect(repeated.headers.get('x-invocation-id')).toBe(id);
    const later = await post('gated-sync', '', { orderId: 2 }, 'sync-1');
    expect([later.status, later.headers.get('x-invocation-id')]).toEqual([200, id]);
    expect((await invocationsOf('gated-sync')).map((i) => i.id)).toEqual([id]);
    expect(syncGate.arrived()).toBe(1);
  });

  it('repeats a failed outcome as the same problem, without a new run', async () => {
    const first = await post('raises', '', { orderId: 9 }, 'raises-1');
    expect(first.json).toMatchObject({ type: 'urn:gi:problem:connector-error', status: 422, title: 'Order rejected' });
    const repeat = await post('raises', '', { orderId: 9 }, 'raises-1');
    expect([repeat.status, repeat.json]).toEqual([422, first.json]);
    expect(await invocationsOf('raises')).toHaveLength(1);
  });

  it('answers 422 for the same key with a different body, query, path or content type, and stores nothing', async () => {
    const first = await post('checked', 'ms=1', { orderId: 3 }, 'checked-1');
    expect(first.status).toBe(200);
    const refusals = await Promise.all([
      post('checked', 'ms=1', { orderId: 4 }, 'checked-1'),
      post('checked', 'ms=1&x=1', { orderId: 3 }, 'checked-1'),
      post('checked', 'ms=1&asyncResponse=true', { orderId: 3 }, 'checked-1'),
      post('busy', 'ms=1', { orderId: 3 }, 'checked-1'),
      api.call(url('checked', 'ms=1'), token, { body: JSON.stringify({ orderId: 3 }), headers: { 'content-type': 'text/plain', 'Idempotency-Key': 'checked-1' } }),
    ]);
    for (const reply of refusals) {
      expect(reply.status).toBe(422);
      expect(reply.json).toMatchObject({ type: 'urn:gi:problem:idempotency-key-reused', status: 422, title: 'Idempotency-Key reused' });
    }
    expect(await invocationsOf('checked')).toHaveLength(1);
  });

  it('keeps keys per bot: another bot\'s same key is a new invocation', async () => {
    const otherToken = await api.setUp('other', 'Order', 'ack', example('ack'));
    const mine = await post('ack', '', { orderId: 5 }, 'shared-key');
    const theirs = await api.postJson(api.webhookUrl('other', 'Order', 'ack'), otherToken, { orderId: 5 }, { 'Idempotency-Key': 'shared-key' });
    expect([mine.status, theirs.status]).toEqual([200, 200]);
    expect(theirs.headers.get('x-invocation-id')).not.toBe(mine.headers.get('x-invocation-id'));
  });

  it('lets a key expire after IDEMPOTENCY_KEY_TTL_SECONDS: the same request then runs again', async () => {
    const first = await post('expiring', 'ms=1', { orderId: 6 }, 'expiring-1');
    expect(first.status).toBe(200);
    expect((await post('expiring', 'ms=1', { orderId: 6 }, 'expiring-1')).headers.get('x-invocation-id')).toBe(first.headers.get('x-invocation-id'));
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const again = await post('expiring', 'ms=1', { orderId: 6 }, 'expiring-1');
    expect(again.status).toBe(200);
    expect(again.headers.get('x-invocation-id')).not.toBe(first.headers.get('x-invocation-id'));
    expect(await invocationsOf('expiring')).toHaveLength(2);
  });

  it.each([
    ['longer than 255 characters', `"${'k'.repeat(256)}"`, /longer than 255/],
    ['malformed (unterminated quote)', '"abc', /malformed/],
    ['malformed (two keys in one header)', 'a, b', /malformed/],
    ['malformed (not ASCII)', '"clé"', /malformed/],
    ['empty', '""', /empty/],
  ])('answers 400 for a key %s, and stores nothing', async (_case, key, detail) => {
    const before = (await invocationsOf('ack')).length;
    const reply = await api.call(url('ack'), token, { body: '{}', headers: { 'content-type': 'application/json', 'Idempotency-Key': key } });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ type: 'urn:gi:problem:bad-request', detail: expect.stringMatching(detail) });
    expect(await invocationsOf('ack')).toHaveLength(before);
  });

  it('50 concurrent async repeats create one invocation; every reply names it', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, () => post('race', 'asyncResponse=true&ms=2000', { orderId: 7 }, 'race-async')));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    // The rest see it in flight (or, on a very slow machine, finished).
    expect(statuses.every((s) => s === 202 || s === 409 || s === 200)).toBe(true);
    const ids = new Set(replies.map(invocationIdOf));
    expect(ids.size).toBe(1);
    expect((await invocationsOf('race')).map((i) => i.id)).toEqual([...ids]);
  });

  it('50 concurrent sync repeats create one invocation and all get its result', async () => {
    const replies = await Promise.all(Array.from({ length: 50 }, () => post('race-sync', 'ms=1000', { orderId: 8 }, 'race-sync')));
    expect(replies.map((r) => r.status)).toEqual(Array(50).fill(200));
    expect(replies.every((r) => r.json.done === true)).toBe(true);
    const ids = new Set(replies.map((r) => r.headers.get('x-invocation-id')));
    expect(ids.size).toBe(1);
    expect((await invocationsOf('race-sync')).map((i) => i.id)).toEqual([...ids]);
  });

  describe('file transfer', () => {
    const fileUrl = () => api.webhookUrl('acme', 'Doc', 'listing', '', 'GenericIntegrationFileTransfer');
    // FormData gets a new multipart boundary on every send: the fingerprint must not depend on it.
    const upload = (key: string, content: string) => {
      const form = new FormData();
      form.append('orderId', '42');
      form.append('doc', new Blob([content], { type: 'text/plain' }), 'doc.txt');
      return api.call(fileUrl(), token, { body: form, headers: { 'Idempotency-Key': key } });
    };

    it('a repeated upload returns the original outcome and leaves no uploaded file behind', async () => {
      const first = await upload('upload-1', 'hello');
      expect(first.status).toBe(200);
      const files = storedFiles(service.dataDir);
      expect(files).toHaveLength(1);
      const repeat = await upload('upload-1', 'hello');
      expect([repeat.status, repeat.json, repeat.headers.get('x-invocation-id')]).toEqual([200, first.json, first.headers.get('x-invocation-id')]);
      expect(storedFiles(service.dataDir)).toEqual(files);
      expect(await invocationsOf('listing')).toHaveLength(1);
    });

    it('the same key with another file gets 422 and leaves no uploaded file behind', async () => {
      const files = storedFiles(service.dataDir);
      const other = await upload('upload-1', 'hello, again');
      expect([other.status, other.json.type]).toEqual([422, 'urn:gi:problem:idempotency-key-reused']);
      expect(storedFiles(service.dataDir)).toEqual(files);
      expect(await invocationsOf('listing')).toHaveLength(1);
    });
  });
});
