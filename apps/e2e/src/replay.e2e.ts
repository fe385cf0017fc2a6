import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Api } from './api-client';
import { CallbackReceiver } from './callback-receiver';
import { MULTIPART, multipartBody } from './multipart';
import { ADMIN_TOKEN, CLI, ROOT, startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * The authoring loop against the built service: deploy v1 and take calls, deploy v2 as a draft,
 * replay the stored calls against it (outbound HTTP blocked, then sent to a local API), see the
 * diffs, and publish it. Live calls answer v1 until the publish, and v2 after it; the replays change
 * no stored invocation, fire no callback and use none of the bot's quota.
 */
const v1 = `const e = Context.GetRequestEntity();
e.ResponseBody = { answer: 'one', orderId: e.RequestBody.orderId };
Context.SetResponseEntity(e);
`;
const v2 = (apiBase: string) => `const e = Context.GetRequestEntity();
let api;
try {
  api = await (await fetch('${apiBase}/price')).text();
} catch (error) {
  api = error.message;
}
e.ResponseBody = { answer: 'two', orderId: e.RequestBody.orderId, api, keyLength: Context.Secrets.API_KEY.length };
Context.SetResponseEntity(e);
`;

describe('replay against a draft (embedded service)', () => {
  let service: ServiceProcess;
  let api: Api;
  let token: string;
  let receiver: CallbackReceiver;
  let priceApi: Server;
  let apiHits = 0;
  let apiBase: string;

  const answer = async () => {
    const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'orders'), token, { orderId: 9 });
    expect(reply.status).toBe(200);
    return reply.json.answer as string;
  };
  const gi = (...args: string[]) =>
    new Promise<{ code: number; out: string; err: string }>((resolve) => {
      const env = { PATH: process.env.PATH, GI_URL: service.baseUrl, GI_ADMIN_TOKEN: ADMIN_TOKEN };
      execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, out, err) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, out, err });
      });
    });
  const target = ['--bot', 'acme', '--integration', 'orders'];

  beforeAll(async () => {
    priceApi = createServer((_req, res) => {
      apiHits++;
      res.end('price 12');
    });
    await new Promise<void>((resolve) => priceApi.listen(0, '127.0.0.1', resolve));
    apiBase = `http://127.0.0.1:${(priceApi.address() as AddressInfo).port}`;
    receiver = await CallbackReceiver.start();
    service = await startService({
      env: { SECRETS_KEY: randomBytes(32).toString('base64'), CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1', CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1', CALLBACK_RETRY_SECONDS: '1' },
    });
    api = new Api(service.baseUrl);
    expect((await api.admin('POST', '/bots/acme/callback-secret')).status).toBe(201);
    token = await api.setUp('acme', 'Order', 'orders', v1, { allowedHosts: [new URL(apiBase).host], callbackUrl: receiver.url('/hook') });
  });
  afterAll(async () => {
    await service.dispose();
    await receiver.close();
    priceApi.closeAllConnections();
    await new Promise((resolve) => priceApi.close(resolve));
  });

  it('replays stored calls against a draft without touching them, then publishes it', async () => {
    const ids: string[] = [];
    for (const orderId of [1, 2, 3]) {
      const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'orders', 'asyncResponse=true'), token, { orderId });
      expect(reply.status).toBe(202);
      ids.push(reply.json.invocationId);
      expect((await api.poll('acme', token, reply.json.invocationId, 'waitSeconds=10')).json).toMatchObject({ answer: 'one', orderId });
    }
    await receiver.received('/hook', 3);
    const stored = () => Promise.all(ids.map(async (id) => (await api.admin('GET', `/bots/acme/invocations/${id}`)).json));
    const before = await stored();
    expect(before.map((inv) => inv.callback.state)).toEqual(['delivered', 'delivered', 'delivered']);

    expect((await api.admin('PUT', '/bots/acme/integrations/orders/secrets/API_KEY', { value: 'replay-secret-value-0123456789' })).status).toBe(201);
    const drafted = await api.admin('PUT', '/bots/acme/integrations/orders/draft', {
      entityName: 'Order',
      code: v2(apiBase),
      allowedHosts: [new URL(apiBase).host],
      callbackUrl: receiver.url('/hook'),
    });
    expect(drafted.json).toMatchObject({ draft: true, liveVersion: 1 });
    const versions = await gi('connector', 'versions', ...target);
    expect(versions.out.split('\n').slice(1, 3).map((line) => line.split(/\s+/)[0])).toEqual(['draft', '1']);
    // A quota of one call at a time and one a second: replays must leave it whole for the callers.
    expect((await api.admin('PUT', '/bots/acme/quotas', { ratePerSecond: 1, burst: 1, maxInFlight: 1 })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1100));

    const blocked = await gi('--json', 'connector', 'replay', ...target, '--draft', '--last', '3');
    expect(blocked.code).toBe(0);
    const report = JSON.parse(blocked.out);
    expect(report).toMatchObject({ integrationId: 'orders', publishedVersion: 1, outbound: 'block', changed: 3 });
    expect(report.replayed.map((r: { invocationId: string }) => r.invocationId)).toEqual([...ids].reverse());
    const newest = report.replayed[0];
    expect(newest.published).toMatchObject({ version: 1, status: 'Completed', responseBody: { answer: 'one', orderId: 3 } });
    expect(newest.draft).toMatchObject({ status: 'Completed', responseBody: { answer: 'two', orderId: 3, api: expect.stringContaining('Outbound HTTP is blocked in this replay'), keyLength: 'replay-secret-value-0123456789'.length } });
    expect(typeof newest.published.durationMs).toBe('number');
    expect(typeof newest.draft.durationMs).toBe('number');
    expect(newest.diff).toContain('-  "answer": "one",\n-  "orderId": 3\n+  "answer": "two",\n+  "orderId": 3,');
    expect(apiHits).toBe(0);
    expect(blocked.out).not.toContain('replay-secret-value');

    const table = await gi('connector', 'replay', ...target, '--draft', '--ids', ids[0], '--outbound', 'send');
    expect(table.code).toBe(0);
    expect(table.out).toMatch(new RegExp(`^${ids[0]}\\s+v1 Completed\\s+draft Completed\\s+.*changed$`, 'm'));
    expect(table.out).toContain('+  "api": "price 12",');
    expect(apiHits).toBe(1);

    // Replays used none of the quota: a live call still gets through, and answers v1 while v2 is a draft.
    expect(await answer()).toBe('one');
    await receiver.received('/hook', 4);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // The three calls and the live call after the replays: no callback of a replay.
    expect(receiver.to('/hook')).toHaveLength(4);
    expect(await stored()).toEqual(before);

    const tooMany = await api.admin('POST', '/bots/acme/integrations/orders/replay', { last: 51 });
    expect(tooMany.status).toBe(400);

    expect(await gi('connector', 'publish', ...target)).toEqual({ code: 0, out: 'Published the draft of orders on bot acme: now live as version 2\n', err: '' });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(await answer()).toBe('two');
    const after = await api.admin('GET', '/bots/acme/integrations/orders/versions');
    expect(after.json).toMatchObject({ latest: 2, draft: null });
    expect(after.json.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
  });

  it('lets the draft read the files stored with a replayed file transfer', async () => {
    const reading = (prefix: string) => `const e = Context.GetRequestEntity();
const file = e.RequestFiles[0];
Context.SetResponseEntity({ ResponseBody: { text: '${prefix}' + await Context.ReadFile(file.Id, { offset: 0, length: file.Size, encoding: 'utf8' }) } });`;
    // A bot of its own: the quota the test before set stays with acme.
    const docsToken = await api.setUp('files', 'Order', 'docs', reading('v1:'));
    const body = multipartBody([{ name: 'orderId', data: '4' }, { name: 'csv', filename: 'order.csv', contentType: 'text/csv', data: 'sku,qty\ntea,2\n' }]);
    const uploaded = await api.call(api.webhookUrl('files', 'Order', 'docs', '', 'GenericIntegrationFileTransfer'), docsToken, { body, headers: { 'content-type': MULTIPART } });
    expect(uploaded.json).toEqual({ text: 'v1:sku,qty\ntea,2\n' });
    expect((await api.admin('PUT', '/bots/files/integrations/docs/draft', { entityName: 'Order', code: reading('v2:') })).status).toBe(200);
    const replay = await api.admin('POST', '/bots/files/integrations/docs/replay', { last: 1 });
    expect(replay.json.replayed).toMatchObject([{ published: { responseBody: { text: 'v1:sku,qty\ntea,2\n' } }, draft: { responseBody: { text: 'v2:sku,qty\ntea,2\n' } } }]);
  });
});
