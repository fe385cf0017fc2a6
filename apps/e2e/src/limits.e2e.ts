import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Api } from './api-client';
import { example } from './connectors';
import { serviceWithConnector } from './deployed-connector';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

describe('rate limits (429)', () => {
  let service: ServiceProcess;
  afterAll(() => service.dispose());

  it('answers 429 with Retry-After over a bot\'s rate, without slowing another bot', async () => {
    service = await startService({ env: { BOT_RATE_LIMIT_PER_SECOND: '5', BOT_RATE_LIMIT_BURST: '5' } });
    const api = new Api(service.baseUrl);
    const noisy = await api.setUp('noisy', 'Order', 'ack', example('ack'));
    const quiet = await api.setUp('quiet', 'Order', 'ack', example('ack'));
    const replies = await Promise.all(Array.from({ length: 20 }, () => api.postJson(api.webhookUrl('noisy', 'Order', 'ack'), noisy, { orderId: 1 })));
    const limited = replies.filter((r) => r.status === 429);
    expect(replies.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(5);
    expect(limited.length).toBeGreaterThanOrEqual(10);
    expect(Number(limited[0].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0].json).toMatchObject({ status: 429, type: 'urn:gi:problem:rate-limited' });
    expect((await api.postJson(api.webhookUrl('quiet', 'Order', 'ack'), quiet, { orderId: 2 })).status).toBe(200);
  });
});

describe('store unavailable (503)', () => {
  let service: ServiceProcess;
  afterAll(() => service.dispose());

  it('answers 503 with Retry-After when the store cannot take the call, and accepts nothing', async () => {
    service = await startService();
    const api = new Api(service.baseUrl);
    const token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    // Another process holds the database's write lock longer than the service waits for it.
    const blocker = new Database(join(service.dataDir, 'store.db'));
    blocker.exec('BEGIN EXCLUSIVE');
    try {
      const reply = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, { orderId: 1 });
      expect(reply.status).toBe(503);
      expect(reply.headers.get('retry-after')).toEqual(expect.any(String));
      expect(reply.json.detail).toContain('nothing was accepted');
    } finally {
      blocker.exec('ROLLBACK');
      blocker.close();
    }
    expect((await api.admin('GET', '/bots/acme/invocations')).json.invocations).toHaveLength(0);
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 2 })).status).toBe(200);
  });
});

describe('per-integration connector limits', () => {
  /** Holds `mib` MiB (query parameter) and answers with a body of `kib` KiB. */
  const sized = `
    const e = Context.GetRequestEntity();
    const param = (name) => Number(new RegExp('(?:^|&)' + name + '=(\\\\d+)').exec(e.RequestParams)?.[1] ?? 0);
    const held = new Uint8Array(param('mib') * 1024 * 1024).fill(1);
    e.ResponseBody = { held: held.length, text: 'x'.repeat(param('kib') * 1024) };
    Context.SetResponseEntity(e);`;
  const service = serviceWithConnector('acme', 'Order', 'roomy', sized);

  const deploy = (integrationId: string, limits: Record<string, number>) =>
    service.api.admin('PUT', `/bots/acme/integrations/${integrationId}`, { entityName: 'Order', code: sized, limits });

  it('stores the limits with the version and refuses limits out of bounds, naming the field', async () => {
    const deployed = await deploy('tight', { memoryMiB: 16, responseBodyKiB: 1 });
    expect(deployed.status).toBe(200);
    expect(deployed.json.limits).toEqual({ memoryMiB: 16, cpuSeconds: 60, responseBodyKiB: 1, logKiB: 64, pendingCalls: 8 });
    expect((await service.api.admin('GET', '/bots/acme/integrations/tight')).json.limits).toEqual(deployed.json.limits);
    const refused = await deploy('tight', { memoryMiB: 4096 });
    expect(refused.status).toBe(400);
    expect(refused.json.errors).toEqual([{ field: 'limits.memoryMiB', message: expect.stringContaining('512') }]);
  });

  it('ends a run at its integration memory limit, where the same code with the default limit completes', async () => {
    const roomy = await service.api.postJson(service.url('mib=24'), service.token, {});
    expect([roomy.status, roomy.json]).toEqual([200, { held: 24 * 1024 * 1024, text: '' }]);
    const tight = await service.api.postJson(service.api.webhookUrl('acme', 'Order', 'tight', 'mib=24'), service.token, {});
    expect(tight.status).toBe(500);
    expect(tight.json).toMatchObject({ title: 'Connector stopped', detail: 'The connector used more than its memory limit of 16 MiB (limits.memoryMiB).' });
  });

  it('ends a run at its integration ResponseBody limit', async () => {
    expect((await service.api.postJson(service.url('kib=4'), service.token, {})).status).toBe(200);
    const tight = await service.api.postJson(service.api.webhookUrl('acme', 'Order', 'tight', 'kib=4'), service.token, {});
    expect(tight.status).toBe(500);
    expect(tight.json.detail).toBe('The ResponseBody is larger than the limit of 1 KiB (limits.responseBodyKiB).');
    // The executor is fine: the next call completes.
    expect((await service.api.postJson(service.api.webhookUrl('acme', 'Order', 'tight', 'mib=1'), service.token, {})).status).toBe(200);
  });
});
