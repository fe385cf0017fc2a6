import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Api } from './api-client';
import { startService, type ServiceProcess } from './service-process';

/** A downstream API on loopback: creates orders for a bearer token, answers gzipped JSON, redirects. */
function startMockApi(): Promise<{ server: Server; base: string; requests: IncomingMessage[] }> {
  const requests: IncomingMessage[] = [];
  const server = createServer((req, res) => {
    requests.push(req);
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk));
    req.on('end', () => {
      if (req.url === '/orders' && req.method === 'POST') {
        if (req.headers.authorization !== 'Bearer erp-token') return res.writeHead(401).end();
        const order = JSON.parse(body) as { id: number };
        res.writeHead(201, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip', 'Set-Cookie': ['s=1', 't=2'] });
        return res.end(gzipSync(JSON.stringify({ erpId: `ERP-${order.id}`, received: order })));
      }
      if (req.url === '/moved') return res.writeHead(307, { Location: '/orders' }).end();
      res.writeHead(404).end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests })));
}

/** `fetch` in connectors run by the built service (on its executor's worker threads), to a trusted loopback API. */
describe('fetch in connectors', () => {
  let service: ServiceProcess;
  let api: Api;
  let mock: Awaited<ReturnType<typeof startMockApi>>;
  beforeAll(async () => {
    mock = await startMockApi();
    service = await startService({ env: { CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' } });
    api = new Api(service.baseUrl);
  });
  afterAll(async () => {
    await service.dispose();
    mock.server.closeAllConnections();
    await new Promise((resolve) => mock.server.close(resolve));
  });

  const forwarder = (base: string) => `
    const e = Context.GetRequestEntity();
    const target = e.RequestBody.path ?? '/orders';
    try {
      const response = await fetch('${base}' + target, {
        method: 'POST',
        headers: { Authorization: 'Bearer erp-token', 'Content-Type': 'application/json' },
        body: JSON.stringify({ id: e.RequestBody.id }),
        signal: AbortSignal.timeout(5000),
      });
      e.ResponseBody = { status: response.status, redirected: response.redirected, cookies: response.headers.getSetCookie(), order: await response.json() };
    } catch (error) {
      e.ResponseBody = { error: error.name + ': ' + error.message };
    }
    Context.SetResponseEntity(e);`;

  it('forwards a webhook to an allowed API with fetch and answers with what it replied', async () => {
    const port = new URL(mock.base).port;
    const token = await api.setUp('acme', 'Order', 'forward', forwarder(mock.base), { allowedHosts: [`127.0.0.1:${port}`] });
    const url = api.webhookUrl('acme', 'Order', 'forward');
    const [first, second] = await Promise.all([api.postJson(url, token, { id: 7 }), api.postJson(url, token, { id: 8, path: '/moved' })]);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ status: 201, redirected: false, cookies: ['s=1', 't=2'], order: { erpId: 'ERP-7', received: { id: 7 } } });
    expect(second.json).toEqual({ status: 201, redirected: true, cookies: ['s=1', 't=2'], order: { erpId: 'ERP-8', received: { id: 8 } } });
    expect(mock.requests.filter((r) => r.url === '/orders').map((r) => r.headers['accept-encoding'])).toEqual(['gzip, deflate, br', 'gzip, deflate, br']);
  });

  it('rejects with a TypeError for a host outside allowedHosts and for a private address', async () => {
    const port = new URL(mock.base).port;
    const token = await api.setUp('acme', 'Order', 'elsewhere', forwarder(mock.base), { allowedHosts: ['api.example.com'] });
    const refused = await api.postJson(api.webhookUrl('acme', 'Order', 'elsewhere'), token, { id: 1 });
    expect(refused.json).toEqual({ error: `TypeError: The host '127.0.0.1:${port}' is not in this integration's allowed hosts.` });
    const privateCode = forwarder(`http://[::1]:${port}`);
    const privateToken = await api.setUp('acme', 'Order', 'private', privateCode, { allowedHosts: [`[::1]:${port}`] });
    const guarded = await api.postJson(api.webhookUrl('acme', 'Order', 'private'), privateToken, { id: 1 });
    expect(guarded.json).toEqual({ error: 'TypeError: The address ::1 is private, loopback or link-local and cannot be requested.' });
  });
});
