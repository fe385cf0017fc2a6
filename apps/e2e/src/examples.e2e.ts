import { rmSync } from 'node:fs';
import { deleteBusTopology, exampleConnector, serviceAccountConnector, standardWebhookHeaders, startExampleApi, type ExampleApi } from '@gi/testing';
import { Api } from './api-client';
import { distributedDeployment } from './distributed-env';
import { startService, type ServiceProcess } from './service-process';

/** The stand-in APIs listen on 127.0.0.1: trusted by the executors, and listed in each integration's allowedHosts. */
const TRUSTED = { CONNECTOR_TRUSTED_ADDRESSES: '127.0.0.1' };
const deployment = { allowedHosts: ['127.0.0.1'], timeoutSeconds: 60 };

/** Deploys the four web-API examples on `admin` and checks each through `api` (gateway and results). */
async function runExamples(admin: Api, api: Api, downstream: ExampleApi) {
  const token = await admin.setUp('acme', 'Order', 'campaign', exampleConnector('bulk-campaign.js'), deployment);
  for (const [id, code] of [
    ['signed', exampleConnector('signed-call.js')],
    ['account', serviceAccountConnector()],
    ['receiver', exampleConnector('verify-signature.js')],
  ]) {
    expect((await admin.admin('PUT', `/bots/acme/integrations/${id}`, { entityName: 'Order', code, ...deployment })).status).toBe(200);
  }
  const url = (id: string, query = '') => api.webhookUrl('acme', 'Order', id, query);

  // 1. The campaign, async: progress while it waits out a 429 and its pauses, then the summary.
  downstream.throttle(1, '2');
  const accepted = await api.postJson(url('campaign', 'asyncResponse=true'), token, {
    recipients: ['a@example.com', 'b@example.com', 'c@example.com'],
    text: 'Hello',
    apiBase: downstream.base,
    pauseMs: 500,
  });
  expect(accepted.status).toBe(202);
  const invocationId = accepted.json.invocationId as string;
  let running = await api.poll('acme', token, invocationId, 'waitSeconds=0');
  for (let i = 0; running.status === 202 && !running.json.progress && i < 50; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    running = await api.poll('acme', token, invocationId, 'waitSeconds=0');
  }
  expect(running).toMatchObject({ status: 202, json: { progress: { message: expect.stringMatching(/of 3 sent$/) } } });
  const done = await api.poll('acme', token, invocationId, 'waitSeconds=30');
  expect(done).toMatchObject({ status: 200, json: { Status: 'Completed', Sent: 3, Failed: [] } });

  // 2. The signed call, sync.
  const headers = { 'X-Request-Id': 'e2e-7' };
  const signed = await api.postJson(url('signed', `apiBase=${encodeURIComponent(downstream.base)}`), token, { orderId: 7 }, headers);
  expect(signed).toMatchObject({ status: 200, json: { Status: 'Forwarded', Reference: expect.stringMatching(/^R-/) } });
  expect(downstream.calls.find((call) => call.path.startsWith('/v1/orders'))?.headers['x-request-id']).toBe('e2e-7');

  // 3. The service account: token exchange, then the API call with the token.
  const query = `tokenUrl=${encodeURIComponent(`${downstream.base}/token`)}&apiBase=${encodeURIComponent(downstream.base)}`;
  const created = await api.postJson(url('account', query), token, { orderId: 9 });
  expect(created).toMatchObject({ status: 200, json: { Status: 'Created', Order: { received: { orderId: 9 } } } });

  // 4. The receiver: the body as sent verifies, a changed one is refused with 422.
  const raw = '{"type":"invoice.paid",  "amount":12.5}';
  const receive = (body: string) => api.call(url('receiver'), token, { body, headers: { 'content-type': 'application/json', ...standardWebhookHeaders(raw) } });
  expect(await receive(raw)).toMatchObject({ status: 200, json: { Status: 'Verified', Type: 'invoice.paid' } });
  expect(await receive(raw.replace('12.5', '1250'))).toMatchObject({ status: 422, json: { title: 'Invalid signature' } });
}

describe('example connectors against a local stand-in API', () => {
  let downstream: ExampleApi;
  beforeAll(async () => {
    downstream = await startExampleApi();
  });
  afterAll(() => downstream.close());
  beforeEach(() => {
    downstream.calls.length = 0;
  });

  it('run in the embedded service', async () => {
    const service: ServiceProcess = await startService({ env: TRUSTED });
    try {
      const api = new Api(service.baseUrl);
      await runExamples(api, api, downstream);
    } finally {
      await service.dispose();
    }
  }, 90_000);

  it('run in the distributed deployment (gateway, results, control and an executor over RabbitMQ)', async () => {
    const { dataDir, prefix, start } = distributedDeployment('examples');
    const services = await Promise.all([start('control'), start('gateway'), start('results'), start('executor', [], TRUSTED)]);
    const [control, gateway, results] = services;
    try {
      // Polls go to the results service; calls to the gateway.
      const api = new Api(gateway.baseUrl);
      api.poll = (...args) => new Api(results.baseUrl).poll(...args);
      await runExamples(new Api(control.baseUrl), api, downstream);
    } finally {
      await Promise.all(services.map((service) => service.stop()));
      await deleteBusTopology(prefix, ['default'], 6);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
