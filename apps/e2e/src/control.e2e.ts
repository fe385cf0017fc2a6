import { Api, send } from './api-client';
import { example } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

describe('control API and operations endpoints', () => {
  let service: ServiceProcess;
  let api: Api;

  beforeAll(async () => {
    service = await startService({ env: { PUBLIC_BASE_URL: 'https://hooks.example.com/' } });
    api = new Api(service.baseUrl);
  });
  afterAll(() => service.dispose());

  it('defines entities with the five webhook fields plus extra ones', async () => {
    const reply = await api.admin('PUT', '/bots/acme/entities/Order', { fields: ['Customer'] });
    expect(reply.status).toBe(200);
    expect(reply.json.fields).toEqual(['RequestParams', 'RequestBody', 'RequestHeaders', 'ResponseBody', 'RequestFiles', 'Customer']);
    expect((await api.admin('GET', '/bots/acme/entities')).json.entities).toHaveLength(1);
  });

  it('refuses connector code that does not compile, with line and column', async () => {
    const code = 'const a = 1;\nconst b = ;\n';
    const reply = await api.admin('PUT', '/bots/acme/integrations/broken', { entityName: 'Order', code });
    expect(reply.status).toBe(400);
    expect(reply.json).toMatchObject({ status: 400, line: 2 });
    expect(reply.json.column).toEqual(expect.any(Number));
    expect(reply.json.detail).toContain('line 2');
    expect((await api.admin('GET', '/bots/acme/integrations/broken')).status).toBe(404);
  });

  it('refuses an integration on an undefined entity, and invalid settings, listing every problem', async () => {
    const missing = await api.admin('PUT', '/bots/acme/integrations/ack', { entityName: 'Nope', code: 'return 1' });
    expect(missing.status).toBe(400);
    expect(missing.json.detail).toContain("Entity 'Nope' is not defined");
    const invalid = await api.admin('PUT', '/bots/acme/integrations/ack', { entityName: 'Order', code: '', timeoutSeconds: 0, extra: 1 });
    expect(invalid.status).toBe(400);
    expect(invalid.json.errors.length).toBeGreaterThanOrEqual(2);
  });

  it('versions each deploy, and new calls use the newest version at once', async () => {
    const v1 = await api.admin('PUT', '/bots/acme/integrations/ack', { entityName: 'Order', code: example('ack') });
    expect(v1.json).toMatchObject({ version: 1, pool: 'default', timeoutSeconds: 60, allowedHosts: [] });
    const token = (await api.admin('POST', '/bots/acme/tokens', {})).json.token;
    const url = api.webhookUrl('acme', 'Order', 'ack');
    expect((await api.postJson(url, token, { orderId: 1 })).json.Status).toBe('Accepted');
    const v2 = await api.admin('PUT', '/bots/acme/integrations/ack', {
      entityName: 'Order',
      code: 'const e = Context.GetRequestEntity(); e.ResponseBody = { v: 2 }; Context.SetResponseEntity(e);',
    });
    expect(v2.json.version).toBe(2);
    expect((await api.postJson(url, token, {})).json).toEqual({ v: 2 });
    const shown = await api.admin('GET', '/bots/acme/integrations/ack');
    expect(shown.json.versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect((await api.admin('GET', '/bots/acme/integrations/ack?version=1')).json.code).toBe(example('ack'));
  });

  it('shows the webhook URLs from the public base URL', async () => {
    const reply = await api.admin('GET', '/bots/acme/webhook');
    expect(reply.headers.get('cache-control')).toBe('no-store');
    const event = 'https://hooks.example.com/api/Platform/acme/GenericIntegrationEvent?invocationId={invocationId}&name={name}';
    expect(reply.json).toMatchObject({ baseUrl: 'https://hooks.example.com', botId: 'acme', eventUrl: event });
    expect(reply.json.integrations[0].urls).toEqual({
      sync: 'https://hooks.example.com/api/Platform/acme/Order/ack/GenericIntegration',
      async: 'https://hooks.example.com/api/Platform/acme/Order/ack/GenericIntegration?asyncResponse=true',
      fileTransfer: 'https://hooks.example.com/api/Platform/acme/Order/ack/GenericIntegrationFileTransfer',
      poll: 'https://hooks.example.com/api/Platform/acme/GetGenericIntegrationResponse?invocationId={invocationId}',
      event,
    });
  });

  it('lists tokens by label without the tokens themselves', async () => {
    const minted = await api.admin('POST', '/bots/acme/tokens', { label: 'erp', ttlSeconds: 3600 });
    expect(minted.json.expiresAt).toEqual(expect.any(String));
    const listed = await api.admin('GET', '/bots/acme/tokens');
    expect(listed.json.tokens.find((t: { tokenId: string }) => t.tokenId === minted.json.tokenId)).toMatchObject({ label: 'erp', revokedAt: null });
    expect(listed.text).not.toContain(minted.json.token);
    expect((await api.admin('POST', '/bots/acme/tokens', { ttlSeconds: 10 })).status).toBe(400);
  });

  it('lists invocations with timings, filtered by status, and shows logs', async () => {
    const token = (await api.admin('POST', '/bots/acme/tokens', {})).json.token;
    await api.admin('PUT', '/bots/acme/integrations/logs', { entityName: 'Order', code: 'Context.Log("hello", { n: 1 }); Context.RaiseError("No", "because");' });
    await api.postJson(api.webhookUrl('acme', 'Order', 'logs'), token, {});
    const failed = await api.admin('GET', '/bots/acme/invocations?status=Failed');
    expect(failed.json.invocations).toHaveLength(1);
    const [run] = failed.json.invocations;
    expect(run).toMatchObject({ integrationId: 'logs', mode: 'sync', status: 'Failed', attempt: 1, error: { code: 'connector_error', title: 'No', detail: 'because' } });
    expect(run.durationMs).toEqual(expect.any(Number));
    const detail = await api.admin('GET', `/bots/acme/invocations/${run.id}`);
    expect(detail.json.logs[0]).toMatchObject({ level: 'info', message: 'hello {"n":1}' });
    expect(detail.json.entity.RequestHeaders).not.toMatch(/authorization/i);
    expect((await api.admin('GET', '/bots/acme/invocations?status=Bogus')).status).toBe(400);
    expect((await api.admin('GET', '/bots/acme/invocations/unknown')).status).toBe(404);
  });

  it('sums up the last hour per minute and per integration for the activity chart', async () => {
    const reply = await api.admin('GET', '/bots/acme/activity');
    expect(reply.status).toBe(200);
    expect(reply.json).toMatchObject({ minutes: 60, truncated: false, total: { count: 3, failed: 1 } });
    expect(reply.json.total.perMinute).toHaveLength(60);
    expect(reply.json.total.perMinute.reduce((sum: number, n: number) => sum + n, 0)).toBe(3);
    expect(Date.parse(reply.json.to) - Date.parse(reply.json.from)).toBeLessThan(60 * 60_000);
    const byId = Object.fromEntries(reply.json.integrations.map((i: { integrationId: string }) => [i.integrationId, i]));
    expect(byId.ack).toMatchObject({ count: 2, failed: 0, p50Ms: expect.any(Number), p99Ms: expect.any(Number) });
    expect(byId.logs).toMatchObject({ count: 1, failed: 1 });
    expect((await api.admin('GET', '/bots/acme/activity?minutes=15')).json.total.perMinute).toHaveLength(15);
    const tooShort = await api.admin('GET', '/bots/acme/activity?minutes=2');
    expect([tooShort.status, tooShort.json.errors[0].field]).toEqual([400, 'minutes']);
    expect((await api.admin('GET', '/bots/nobody/activity')).json.total.count).toBe(0);
  });

  it('refuses non-JSON and malformed admin bodies', async () => {
    const text = await send(`${service.baseUrl}/admin/bots/acme/entities/X`, {
      method: 'PUT',
      headers: { authorization: `Bearer e2e-admin-token-0123456789abcdef`, 'content-type': 'text/plain' },
      body: '{}',
    });
    expect(text.status).toBe(415);
    const bad = await send(`${service.baseUrl}/admin/bots/acme/entities/X`, {
      method: 'PUT',
      headers: { authorization: `Bearer e2e-admin-token-0123456789abcdef`, 'content-type': 'application/json' },
      body: '{"fields": [',
    });
    expect(bad.status).toBe(400);
    expect((await api.admin('PUT', '/bots/bad%20bot/entities/X', {})).status).toBe(400);
  });

  it('runs connectors on worker threads in the built service', () => {
    const listening = service.output.map((line) => line).find((line) => line.includes('"msg":"listening"'));
    expect(JSON.parse(listening!).sandbox).toBe('worker-threads');
  });

  it('serves health, readiness and Prometheus metrics', async () => {
    expect((await send(`${service.baseUrl}/healthz`)).json).toEqual({ status: 'ok' });
    // The embedded service covers the store, its writes and the disk of DATA_DIR.
    expect((await send(`${service.baseUrl}/readyz`)).json).toEqual({ status: 'ready', checks: { store: 'ok', storeWrites: 'ok', disk: 'ok' } });
    const metrics = await send(`${service.baseUrl}/metrics`);
    expect(metrics.text).toContain('gi_http_request_duration_seconds_bucket');
    expect(metrics.text).toContain('gi_invocation_outcomes_total');
  });
});

describe('graceful shutdown', () => {
  it('finishes a running sync call on SIGTERM before it exits', async () => {
    const service = await startService();
    const api = new Api(service.baseUrl);
    const token = await api.setUp('acme', 'Order', 'slow', 'const end = Date.now() + 800; while (Date.now() < end) {} const e = Context.GetRequestEntity(); e.ResponseBody = "done"; Context.SetResponseEntity(e);');
    const pending = api.postJson(api.webhookUrl('acme', 'Order', 'slow', 'responseContentType=text/plain'), token, {});
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exit = service.stop('SIGTERM');
    const reply = await pending;
    expect([reply.status, reply.text]).toEqual([200, 'done']);
    expect(await exit).toBe(0);
    await service.dispose();
  });
});
