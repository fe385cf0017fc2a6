import Database from 'better-sqlite3';
import { join } from 'node:path';
import { Api } from './api-client';
import { example } from './connectors';
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
