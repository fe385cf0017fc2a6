import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Api } from './api-client';
import { CallbackReceiver } from './callback-receiver';
import type { Delivery } from './callback-receiver';
import { example, loops } from './connectors';
import { ROOT, startService } from './service-process';
import type { ServiceProcess } from './service-process';

type Verify = (secret: string, headers: Record<string, unknown>, body: string) => boolean;

/** The first code block under "Verifying a callback" in docs/callbacks.md: the recipe as users copy it. */
function documentedRecipe(): Verify {
  const doc = readFileSync(join(ROOT, 'docs/callbacks.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Verifying a callback'));
  const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  if (!code) throw new Error('docs/callbacks.md has no recipe under "Verifying a callback"');
  return new Function('require', `${code}\nreturn verifyWebhook;`)(require) as Verify;
}

const payloadOf = (delivery: Delivery) => JSON.parse(delivery.body);

describe('callbacks (embedded service, receivers on 127.0.0.1 trusted)', () => {
  const verify = documentedRecipe();
  let service: ServiceProcess;
  let receiver: CallbackReceiver;
  let api: Api;
  let token: string;
  let secret: string;
  const start = (query: string, headers: Record<string, string>, integration = 'ack') =>
    api.postJson(api.webhookUrl('acme', 'Order', integration, query), token, { orderId: 42 }, headers);

  beforeAll(async () => {
    receiver = await CallbackReceiver.start();
    service = await startService({ env: { CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1', CALLBACK_RETRY_SECONDS: '1', SWEEP_INTERVAL_SECONDS: '1' } });
    api = new Api(service.baseUrl);
    token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    const created = await api.admin('POST', '/bots/acme/callback-secret');
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.json).toMatchObject({ botId: 'acme', previousSecretValidUntil: null });
    secret = created.json.secret;
  });
  afterAll(async () => {
    await service.dispose();
    await receiver.close();
  });

  it('POSTs a signed outcome that the documented recipe verifies, with what the poll answers', async () => {
    const started = await start('asyncResponse=true', { 'Callback-Url': receiver.url('/hooks/signed') });
    expect(started.status).toBe(202);
    const id = started.json.invocationId;
    const [delivery] = await receiver.received('/hooks/signed');
    expect(verify(secret, delivery.headers, delivery.body)).toBe(true);
    expect(verify(secret, delivery.headers, delivery.body.replace('42', '43'))).toBe(false);
    expect(verify('whsec_b3RoZXItc2VjcmV0LW9mLTMyLWJ5dGVzLWxvbmc=', delivery.headers, delivery.body)).toBe(false);
    expect(delivery.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': id });

    const poll = await api.poll('acme', token, id, 'waitSeconds=0');
    expect(payloadOf(delivery)).toEqual({
      type: 'invocation.completed',
      timestamp: expect.any(String),
      data: { invocationId: id, status: 'Completed', botId: 'acme', entityName: 'Order', integrationId: 'ack', contentType: poll.headers.get('content-type'), body: poll.json },
    });
    const shown = await api.admin('GET', `/bots/acme/invocations/${id}`);
    expect(shown.json.callback).toMatchObject({ url: receiver.url('/hooks/signed'), state: 'delivered', attempts: 1, lastError: null });
    // The secret is never shown again.
    expect(JSON.stringify((await api.admin('GET', '/bots/acme/callback-secret')).json)).not.toContain(secret.slice(6));
  });

  it('retries a receiver that fails twice with back-off and delivers on the third attempt', async () => {
    receiver.answer('/hooks/flaky', 500, 500, 204);
    const started = await start('asyncResponse=true', { 'Callback-Url': receiver.url('/hooks/flaky') });
    const id = started.json.invocationId;
    const deliveries = await receiver.received('/hooks/flaky', 3);
    expect(deliveries.every((d) => d.headers['webhook-id'] === id && verify(secret, d.headers, d.body))).toBe(true);
    const waits = [deliveries[1].at - deliveries[0].at, deliveries[2].at - deliveries[1].at];
    console.log(`callback retries after ${waits.join(' ms and ')} ms`);
    // 1 s then 4 s at most, half of each at least (the jitter).
    expect(waits[0]).toBeGreaterThanOrEqual(400);
    expect(waits[1]).toBeGreaterThanOrEqual(1800);
    const shown = await api.admin('GET', `/bots/acme/invocations/${id}`);
    expect(shown.json.callback).toMatchObject({ state: 'delivered', attempts: 3, lastError: null });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(receiver.to('/hooks/flaky')).toHaveLength(3);
  });

  it('sends the integration\'s callback for sync calls, and the 410 problem for a cancelled invocation', async () => {
    const hooked = receiver.url('/hooks/integration');
    expect((await api.admin('PUT', '/bots/acme/integrations/hooked', { entityName: 'Order', code: example('ack'), callbackUrl: hooked })).status).toBe(200);
    expect((await api.admin('PUT', '/bots/acme/integrations/hooked-loop', { entityName: 'Order', code: loops, timeoutSeconds: 600, callbackUrl: hooked })).status).toBe(200);
    const sync = await start('', {}, 'hooked');
    expect(sync.status).toBe(200);
    const [completed] = await receiver.received('/hooks/integration');
    expect(payloadOf(completed).data).toMatchObject({ invocationId: sync.headers.get('x-invocation-id'), body: sync.json });

    const looping = await start('asyncResponse=true', {}, 'hooked-loop');
    const id = looping.json.invocationId;
    expect((await api.admin('DELETE', `/bots/acme/invocations/${id}`)).status).toBe(200);
    const [, cancelled] = await receiver.received('/hooks/integration', 2);
    expect(verify(secret, cancelled.headers, cancelled.body)).toBe(true);
    expect(payloadOf(cancelled)).toMatchObject({
      type: 'invocation.cancelled',
      data: { invocationId: id, status: 'Cancelled', problem: { type: 'urn:gi:problem:cancelled', status: 410, invocationId: id } },
    });
  });

  it('refuses bad callback URLs, and callbacks of a bot without a signing secret (400)', async () => {
    const bad = await start('asyncResponse=true', { 'Callback-Url': 'ftp://files.example.com/in' });
    expect([bad.status, bad.json.detail]).toEqual([400, 'The Callback-Url header cannot be used: only http and https URLs can receive callbacks.']);
    expect((await start('asyncResponse=true', { 'Callback-Url': 'https://user:pw@hooks.example.com/' })).status).toBe(400);
    expect((await start('asyncResponse=true', { 'Callback-Url': '/relative' })).status).toBe(400);

    const other = await api.setUp('unsigned', 'Order', 'ack', example('ack'));
    const unsigned = await api.postJson(api.webhookUrl('unsigned', 'Order', 'ack', 'asyncResponse=true'), other, {}, { 'Callback-Url': receiver.url('/hooks/x') });
    expect([unsigned.status, unsigned.json.detail]).toEqual([
      400,
      "Callbacks are signed with the bot's signing secret, and bot 'unsigned' has none yet; its administrator creates one first (gi callback-secret rotate).",
    ]);
    const deploy = await api.admin('PUT', '/bots/unsigned/integrations/hooked', { entityName: 'Order', code: example('ack'), callbackUrl: receiver.url('/hooks/x') });
    expect(deploy.status).toBe(400);
    expect((await api.admin('GET', '/bots/unsigned/callback-secret')).status).toBe(404);
    expect((await api.admin('GET', '/bots/unsigned/invocations')).json.invocations).toEqual([]);
  });

  it('signs with the new and the previous secret for a day after a rotation', async () => {
    const rotated = await api.admin('POST', '/bots/acme/callback-secret');
    expect(rotated.json.previousSecretValidUntil).toEqual(expect.any(String));
    await start('asyncResponse=true', { 'Callback-Url': receiver.url('/hooks/rotated') });
    const [delivery] = await receiver.received('/hooks/rotated');
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(verify(rotated.json.secret, delivery.headers, delivery.body)).toBe(true);
    expect(verify(secret, delivery.headers, delivery.body)).toBe(true);
    secret = rotated.json.secret;
  });
});

describe('callbacks with the default egress policy', () => {
  let receiver: CallbackReceiver;
  let service: ServiceProcess;
  afterAll(async () => {
    await service?.dispose();
    await receiver?.close();
  });

  it('refuses a receiver on a loopback address and gives the callback up at once', async () => {
    receiver = await CallbackReceiver.start();
    service = await startService();
    const api = new Api(service.baseUrl);
    const token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    await api.admin('POST', '/bots/acme/callback-secret');
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, {}, { 'Callback-Url': receiver.url('/hooks/private') });
    expect(started.status).toBe(202);
    const id = started.json.invocationId;
    const deadline = Date.now() + 15_000;
    let callback;
    do {
      await new Promise((resolve) => setTimeout(resolve, 100));
      callback = (await api.admin('GET', `/bots/acme/invocations/${id}`)).json.callback;
    } while (callback.state === 'pending' && Date.now() < deadline);
    expect(callback).toMatchObject({ state: 'failed', attempts: 1, lastError: 'The address 127.0.0.1 is private, loopback or link-local and cannot be requested.' });
    expect(receiver.deliveries).toEqual([]);
    // Polling stays available.
    expect((await api.poll('acme', token, id, 'waitSeconds=0')).status).toBe(200);
  });
});

describe('callbacks across a restart', () => {
  let receiver: CallbackReceiver;
  let first: ServiceProcess;
  let service: ServiceProcess;
  afterAll(async () => {
    await service?.stop();
    await first?.dispose();
    await receiver?.close();
  });

  it('delivers after a restart a callback whose receiver was down before it', async () => {
    // The receiver's port, not listening yet.
    receiver = await CallbackReceiver.start();
    await receiver.close();
    // A retry whose sender stopped is taken by the next sweep of the process that runs next.
    const env = { CALLBACK_TRUSTED_ADDRESSES: '127.0.0.1', CALLBACK_RETRY_SECONDS: '1', SWEEP_INTERVAL_SECONDS: '1' };
    first = await startService({ env });
    const api = new Api(first.baseUrl);
    const token = await api.setUp('acme', 'Order', 'ack', example('ack'));
    const secret = (await api.admin('POST', '/bots/acme/callback-secret')).json.secret;
    const started = await api.postJson(api.webhookUrl('acme', 'Order', 'ack', 'asyncResponse=true'), token, {}, { 'Callback-Url': receiver.url('/hooks/later') });
    const id = started.json.invocationId;
    const deadline = Date.now() + 15_000;
    while ((await api.admin('GET', `/bots/acme/invocations/${id}`)).json.callback.attempts === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pending = (await api.admin('GET', `/bots/acme/invocations/${id}`)).json.callback;
    expect(pending).toMatchObject({ state: 'pending', attempts: 1, lastError: expect.stringMatching(/^The request failed: .*ECONNREFUSED/) });
    expect(await first.stop()).toBe(0);

    await receiver.listen();
    service = await startService({ env, dataDir: first.dataDir });
    const [delivery] = await receiver.received('/hooks/later');
    expect(delivery.headers['webhook-id']).toBe(id);
    expect(documentedRecipe()(secret, delivery.headers, delivery.body)).toBe(true);
    expect((await new Api(service.baseUrl).admin('GET', `/bots/acme/invocations/${id}`)).json.callback).toMatchObject({ state: 'delivered', attempts: 2 });
  });
});
