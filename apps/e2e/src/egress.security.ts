import { Api } from './api-client';
import { CallbackReceiver } from './callback-receiver';
import { example } from './connectors';
import { startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * The egress guard through the built service: callbacks and connector HTTP. The only receiver listens
 * on 127.0.0.1, which the service trusts (for connectors written as ::ffff:127.0.0.1), so a request
 * that gets through reaches it and one that is refused leaves it untouched.
 */
describe('egress through the service (127.0.0.1 trusted)', () => {
  let service: ServiceProcess;
  let receiver: CallbackReceiver;
  let api: Api;
  let token: string;
  let port: string;

  beforeAll(async () => {
    receiver = await CallbackReceiver.start();
    port = new URL(receiver.url('/')).port;
    const env = { CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1', CONNECTOR_TRUSTED_ADDRESSES: '::ffff:127.0.0.1', SWEEP_INTERVAL_SECONDS: '1' };
    service = await startService({ env });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    expect((await api.admin('POST', '/bots/acme/callback-secret')).status).toBe(201);
  });
  afterAll(async () => {
    await service?.dispose();
    await receiver?.close();
  });

  async function callbackOf(callbackUrl: string) {
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, {}, { 'Callback-Url': callbackUrl });
    expect(started.status).toBe(202);
    const deadline = Date.now() + 15_000;
    let callback;
    do {
      await new Promise((resolve) => setTimeout(resolve, 100));
      callback = (await api.admin('GET', `/bots/acme/invocations/${started.json.invocationId}`)).json.callback;
    } while (callback.state === 'pending' && Date.now() < deadline);
    return callback;
  }

  it('gives up at once a callback to the trusted loopback address written as IPv4-compatible IPv6', async () => {
    const callback = await callbackOf(`http://[::127.0.0.1]:${port}/hooks/compatible`);
    expect(callback).toMatchObject({ state: 'failed', attempts: 1, lastError: 'The address ::7f00:1 is private, loopback or link-local and cannot be requested.' });
    expect(receiver.to('/hooks/compatible')).toEqual([]);
  });

  it('delivers a callback to the trusted address in another spelling of it', async () => {
    const callback = await callbackOf(`http://2130706433:${port}/hooks/decimal`);
    expect(callback).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(receiver.to('/hooks/decimal')).toHaveLength(1);
  });

  it('refuses at deploy an allowedHosts entry that could never match (400 naming it)', async () => {
    const deploy = await api.admin('PUT', '/bots/acme/integrations/caller', { entityName: 'Order', code: example('ack'), allowedHosts: ['api.example.com', '127.1'] });
    expect(deploy.status).toBe(400);
    expect(deploy.json.detail).toBe("allowedHosts.1: '127.1' is not written as URLs write it: use 127.0.0.1");
  });

  it('lets a connector call an allowed host on the port its entry names, on no other, and never a private address', async () => {
    const code = `
      const r = await Context.Http.Request({ method: 'POST', url: Context.GetRequestEntity().RequestBody.url, body: {} }).then(
        (response) => ({ status: response.status }),
        (error) => ({ error: error.message }),
      );
      Context.SetResponseEntity({ ResponseBody: r });`;
    const other = Number(port) === 65535 ? 65534 : Number(port) + 1;
    const deploy = await api.admin('PUT', '/bots/acme/integrations/caller', { entityName: 'Order', code, allowedHosts: [`127.0.0.1:${port}`, `[::7f00:1]:${port}`] });
    expect(deploy.status).toBe(200);
    const call = (url: string) => api.postJson(api.webhookUrl('acme', 'Order', 'caller'), token, { url });

    expect((await call(receiver.url('/connector/allowed'))).json).toEqual({ status: 204 });
    expect((await call(`http://127.0.0.1:${other}/connector/other`)).json).toEqual({
      error: `The host '127.0.0.1:${other}' is not in this integration's allowed hosts.`,
    });
    expect((await call(`http://[::127.0.0.1]:${port}/connector/compatible`)).json).toEqual({
      error: 'The address ::7f00:1 is private, loopback or link-local and cannot be requested.',
    });
    expect(receiver.to('/connector/allowed')).toHaveLength(1);
    expect(receiver.deliveries.filter((d) => d.path.startsWith('/connector/') && d.path !== '/connector/allowed')).toEqual([]);
  });
});
