import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { InProcessReply } from '@gi/http';
import { ADMIN_TOKEN, ServicesFixture } from './services.fixture';

/**
 * A bot id deleted and created again is a new tenant: the new bot's token must not poll the old
 * invocations, get old outcomes for old Idempotency-Keys, or replay old requests into its drafts, and
 * the old files must be gone from the disk. Embedded service in-process; nothing runs connectors, so
 * accepted calls stay queued (in flight: deleting the bot needs force=true).
 */

const fixture = new ServicesFixture();
const service = () => fixture.service('embedded');
const WEBHOOK = '/api/Platform/tenant/Order/ack';
const boundary = 'b0undary';

beforeAll(() => fixture.start());
afterAll(() => fixture.close());

const json = (reply: InProcessReply) => (reply.body ? (JSON.parse(reply.body) as Record<string, unknown>) : {});
const admin = async (method: string, path: string, body?: unknown) => {
  const reply = await service().call({ method, path: `/admin${path}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: reply.status, json: json(reply) };
};
const call = (token: string, headers: Record<string, string> = {}) =>
  service().call({ method: 'POST', path: `${WEBHOOK}/GenericIntegration?asyncResponse=true`, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: '{"order":1}' });
const upload = (token: string) =>
  service().call({
    method: 'POST',
    path: `${WEBHOOK}/GenericIntegrationFileTransfer?asyncResponse=true`,
    headers: { authorization: `Bearer ${token}`, 'content-type': `multipart/form-data; boundary=${boundary}` },
    body: `--${boundary}\r\nContent-Disposition: form-data; name="f"; filename="old.txt"\r\n\r\nold tenant's file\r\n--${boundary}--\r\n`,
  });
const poll = (token: string, id: string) => service().call({ path: `/api/Platform/tenant/GetGenericIntegrationResponse?invocationId=${id}&waitSeconds=0`, headers: { authorization: `Bearer ${token}` } });
const botFiles = () => (existsSync(join(fixture.dir, 'files', 'tenant')) ? readdirSync(join(fixture.dir, 'files', 'tenant')) : []);

it('gives a bot created again with a deleted bot\'s id none of the old tenant\'s invocations, keys, replays or files', async () => {
  const { token: oldToken } = await fixture.setUpBot('tenant');
  const keyed = await call(oldToken, { 'idempotency-key': '"order-1"' });
  expect(keyed.status).toBe(202);
  const oldId = json(keyed).invocationId as string;
  const uploaded = await upload(oldToken);
  expect(uploaded.status).toBe(202);
  expect(botFiles()).toHaveLength(1);

  // Forced: the old calls are still queued.
  const deleted = await admin('DELETE', '/bots/tenant?force=true');
  expect(deleted.status).toBe(200);
  expect(botFiles()).toEqual([]);

  const { token: newToken } = await fixture.setUpBot('tenant');
  // Polls of the old invocations: unknown.
  expect((await poll(newToken, oldId)).status).toBe(404);
  expect((await poll(newToken, json(uploaded).invocationId as string)).status).toBe(404);
  // The old Idempotency-Key: a new call, not the old invocation (a repeat would answer 409 naming it).
  const again = await call(newToken, { 'idempotency-key': '"order-1"' });
  expect(again.status).toBe(202);
  expect(json(again).invocationId).not.toBe(oldId);
  // The admin lists only the new bot's invocation, and a replay into its draft finds no old request.
  const listed = await admin('GET', '/bots/tenant/invocations');
  expect((listed.json.invocations as Array<{ id: string }>).map((i) => i.id)).toEqual([json(again).invocationId]);
  expect((await admin('GET', `/bots/tenant/invocations/${oldId}`)).status).toBe(404);
  expect((await admin('PUT', '/bots/tenant/integrations/ack/draft', { entityName: 'Order', code: 'Context.SetResponseEntity(Context.GetRequestEntity());' })).status).toBe(200);
  const replay = await admin('POST', '/bots/tenant/integrations/ack/replay', { ids: [oldId] });
  expect(JSON.stringify(replay.json)).not.toContain('"order":1}');
  expect(replay.status === 404 || (replay.json.replayed as unknown[]).length === 0).toBe(true);
});
