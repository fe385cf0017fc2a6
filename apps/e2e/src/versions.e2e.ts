import { Api } from './api-client';
import { example } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

describe('PLATFORM_VERSION rules', () => {
  let services: ServiceProcess[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.dispose()));
    services = [];
  });

  async function serviceAt(version: string) {
    const service = await startService({ env: { PLATFORM_VERSION: version } });
    services.push(service);
    const api = new Api(service.baseUrl);
    const token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    return { api, token };
  }

  it('9.9: no async mode, no polling, no file transfer; sync replies default to text/plain', async () => {
    const { api, token } = await serviceAt('9.9');
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, {})).status).toBe(400);
    expect((await api.poll('acme', token, 'x')).status).toBe(404);
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'ack', '', 'GenericIntegrationFileTransfer'), token, {})).status).toBe(404);
    const sync = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 1 });
    expect(sync.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(JSON.parse(sync.text)).toEqual({ Status: 'Accepted', Message: 'order 1' });
  });

  it('9.16: async allowed with a JSON default, sync still text/plain', async () => {
    const { api, token } = await serviceAt('9.16');
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, { orderId: 2 });
    expect(started.status).toBe(202);
    const polled = await api.poll('acme', token, started.json.invocationId, 'waitSeconds=10');
    expect(polled.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const sync = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 1 });
    expect(sync.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect((await api.postJson(api.webhookUrl('acme', 'Order', 'ack', '', 'GenericIntegrationFileTransfer'), token, {})).status).toBe(404);
  });

  it('9.17: sync replies default to JSON', async () => {
    const { api, token } = await serviceAt('9.17');
    const sync = await api.postJson(api.webhookUrl('acme', 'Order', 'ack'), token, { orderId: 1 });
    expect(sync.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });
});
