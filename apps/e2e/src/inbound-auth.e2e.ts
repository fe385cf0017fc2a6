import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KeyedInboundAuth } from '@gi/domain';
import { inboundProducers } from '@gi/testing';
import type { Producer } from '@gi/testing';
import { Api, send } from './api-client';
import type { Reply } from './api-client';
import { distributedDeployment } from './distributed-env';
import { ADMIN_TOKEN, CLI, startService } from './service-process';
import type { ServiceProcess } from './service-process';

/**
 * Webhook calls of integrations with an inbound scheme, against the built service as real processes:
 * embedded (one start, no SECRETS_KEY: it generates one) and distributed (gateway, control, executor and
 * results over RabbitMQ and a shared SQLite file). For every scheme, a delivery signed by the provider's
 * own library runs its connector, which sees the scheme and the delivery id; the redelivery runs nothing;
 * a call signed otherwise is refused 401 and counted. The service is behind a "proxy": producers sign
 * the public URL, the test calls the service's own address.
 */

const PUBLIC_URL = 'https://hooks.example.com';
const KEY_SECRET = 'INBOUND_KEY';
/** Answers what the connector sees: how the call was verified and the headers kept. */
const ECHO = 'const e = Context.GetRequestEntity();\ne.ResponseBody = { inbound: Context.InboundAuth, headers: e.RequestHeaders };\nContext.SetResponseEntity(e);\n';
const path = (scheme: string, query = '') => `/api/Platform/acme/Order/in-${scheme}/GenericIntegration${query}`;
const execCli = promisify(execFile);

/** Deploys an integration per scheme, each with its key in its own connector secret. */
async function setUp(control: Api, producers: Record<string, Producer>): Promise<string> {
  expect((await control.admin('PUT', '/bots/acme/entities/Order', {})).status).toBe(200);
  for (const [scheme, producer] of Object.entries(producers)) {
    const deployed = await control.admin('PUT', `/bots/acme/integrations/in-${scheme}`, { entityName: 'Order', code: ECHO, inboundAuth: producer.auth });
    expect([scheme, deployed.status]).toEqual([scheme, 200]);
    expect((await control.admin('PUT', `/bots/acme/integrations/in-${scheme}/secrets/${KEY_SECRET}`, { value: producer.key })).status).toBe(201);
  }
  return (await control.admin('POST', '/bots/acme/tokens', { label: 'inbound' })).json.token as string;
}

/** Sends a producer's signed call to the service's address (the URL it signed is the public one). */
async function deliver(gateway: string, scheme: string, producer: Producer, delivery: string, options: { at?: number; key?: string; query?: string; tamper?: boolean } = {}): Promise<{ reply: Reply; deliveryId: string | null }> {
  const query = options.query ?? '';
  const call = await producer.sign({ url: `${PUBLIC_URL}${path(scheme, query)}`, at: options.at ?? Date.now(), delivery, key: options.key });
  // One byte changed after signing, the last but one (a body's end: JSON's last value, a form's last parameter).
  const body = options.tamper ? `${call.body.slice(0, -2)}${call.body.at(-2) === 'x' ? 'y' : 'x'}${call.body.slice(-1)}` : call.body;
  const reply = await send(`${gateway}${path(scheme, query)}`, { method: 'POST', headers: { ...call.headers, 'content-type': call.contentType }, body });
  return { reply, deliveryId: call.deliveryId };
}

/** The checks every deployment runs on every scheme; returns a line per failed expectation. */
async function checkEveryScheme(gateway: string, control: Api, producers: Record<KeyedInboundAuth['scheme'], Producer>, name: string): Promise<string[]> {
  const failures: string[] = [];
  const expect = (ok: boolean, what: string) => void (ok || failures.push(what));
  for (const [scheme, producer] of Object.entries(producers)) {
    const delivery = `${name}-${scheme}-${randomBytes(4).toString('hex')}`;
    const first = await deliver(gateway, scheme, producer, delivery);
    const seen = first.reply.json as { inbound?: { scheme: string; deliveryId: string | null }; headers?: string } | undefined;
    expect(first.reply.status === 200, `${scheme}: signed call answered ${first.reply.status} ${first.reply.text.slice(0, 160)}`);
    expect(seen?.inbound?.scheme === scheme && seen.inbound.deliveryId === first.deliveryId, `${scheme}: the connector saw ${JSON.stringify(seen?.inbound)}`);
    const credential = new Set([...(producer.auth.scheme === 'hmac' || producer.auth.scheme === 'api-key' ? [producer.auth.header] : []), 'Authorization', 'X-Hub-Signature-256', 'Stripe-Signature', 'X-Shopify-Hmac-Sha256', 'X-Slack-Signature', 'X-HubSpot-Signature-v3', 'X-Twilio-Signature', 'webhook-signature']);
    const stored = [...new URLSearchParams(seen?.headers ?? '').keys()];
    expect(!stored.some((header) => credential.has(header)) && stored.length > 0, `${scheme}: RequestHeaders kept ${stored.join(', ')}`);

    // The same delivery again, signed anew a second later: the first answer, nothing run.
    const again = await deliver(gateway, scheme, producer, delivery, { at: Date.now() + 1000 });
    expect(again.reply.status === 200 && again.reply.text === first.reply.text, `${scheme}: the redelivery answered ${again.reply.status}`);
    expect(again.reply.headers.get('x-invocation-id') === first.reply.headers.get('x-invocation-id'), `${scheme}: the redelivery ran as another invocation`);
    const runs = (await control.admin('GET', `/bots/acme/invocations?integrationId=in-${scheme}&limit=10`)).json.invocations as unknown[];
    expect(runs.length === 1, `${scheme}: ${runs.length} invocations stored for one delivery`);

    // Signed with another key, or a body changed after signing: 401 naming why, nothing stored.
    const wrongKey = await deliver(gateway, scheme, producer, `${delivery}-x`, { key: producer.otherKey });
    const reason = scheme === 'basic' || scheme === 'api-key' ? 'unknown-key' : 'bad-signature';
    expect(wrongKey.reply.status === 401 && wrongKey.reply.json?.type === `urn:gi:problem:${reason}`, `${scheme}: another key answered ${wrongKey.reply.status} ${wrongKey.reply.json?.type}`);
    if (reason === 'bad-signature') {
      const tampered = await deliver(gateway, scheme, producer, `${delivery}-t`, { tamper: true });
      expect(tampered.reply.status === 401 && tampered.reply.json?.type === 'urn:gi:problem:bad-signature', `${scheme}: a tampered body answered ${tampered.reply.status}`);
    }
    const after = (await control.admin('GET', `/bots/acme/invocations?integrationId=in-${scheme}&limit=10`)).json.invocations as unknown[];
    expect(after.length === 1, `${scheme}: a refused call was stored`);
  }
  return failures;
}

/** Counts of gi_auth_failures_total{caller="bot"} by reason, from a service's /metrics. */
async function authFailures(baseUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  return Object.fromEntries([...text.matchAll(/^gi_auth_failures_total\{caller="bot",reason="(\w+)"\} (\d+)$/gm)].map(([, reason, count]) => [reason, Number(count)]));
}

describe('inbound auth, embedded (gi up without SECRETS_KEY)', () => {
  let service: ServiceProcess;
  let api: Api;
  let producers: Record<KeyedInboundAuth['scheme'], Producer>;
  let token: string;

  beforeAll(async () => {
    producers = await inboundProducers(KEY_SECRET);
    service = await startService({ env: { PUBLIC_BASE_URL: PUBLIC_URL } });
    api = new Api(service.baseUrl);
    token = await setUp(api, producers);
  });
  afterAll(async () => service?.dispose());

  it("generated its SECRETS_KEY into the user's configuration directory (0600, outside DATA_DIR) and said where", () => {
    const keyFile = join(`${service.dataDir}.config`, 'generic-integration', 'secrets-key');
    const line = service.output.map((l) => JSON.parse(l.startsWith('{') ? l : '{}') as { msg?: string; path?: string }).find((l) => l.msg?.startsWith('generated SECRETS_KEY'));
    expect(line?.path).toBe(keyFile);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(keyFile.startsWith(`${service.dataDir}/`)).toBe(false);
  });

  it('runs a delivery of every scheme signed by its provider once, shows the connector what was verified, and refuses the rest', async () => {
    expect(await checkEveryScheme(service.baseUrl, api, producers, 'embedded')).toEqual([]);
    const failures = await authFailures(service.baseUrl);
    expect(failures).toMatchObject({ bad_signature: 16, unknown_key: 2 });
  }, 60_000);

  it('still needs a token of the bot to poll, and refuses a bearer token alone on a scheme\'s integration', async () => {
    const started = await deliver(service.baseUrl, 'github', producers.github, `poll-${randomBytes(4).toString('hex')}`, { query: '?asyncResponse=true' });
    expect(started.reply.status).toBe(202);
    const location = `${service.baseUrl}${started.reply.headers.get('location')}`;
    expect((await send(location)).status).toBe(401);
    expect([200, 202]).toContain((await send(location, { headers: { authorization: `Bearer ${token}` } })).status);
    const bearerOnly = await api.postJson(`${service.baseUrl}${path('github')}`, token, { orderId: 1 });
    expect([bearerOnly.status, bearerOnly.json.type]).toEqual([401, 'urn:gi:problem:missing-signature']);
  });

  it('gi webhook shows per integration the scheme and what to paste into the provider', async () => {
    const { stdout } = await execCli(process.execPath, [CLI, 'webhook', '--bot', 'acme'], { env: { PATH: process.env.PATH, GI_URL: service.baseUrl, GI_ADMIN_TOKEN: ADMIN_TOKEN } });
    expect(stdout).toContain(`in-github (entity Order)`);
    expect(stdout).toContain('inbound auth: github from GitHub');
    expect(stdout).toContain(`Payload URL   ${PUBLIC_URL}${path('github')}`);
    expect(stdout).toContain(`key secrets: ${KEY_SECRET} (set)`);
    expect(stdout).toContain('inbound auth: stripe from Stripe');
  });

  it('uses the key it generated from then on: after a restart the stored key secrets still open', async () => {
    const { dataDir } = service;
    await service.stop();
    service = await startService({ dataDir, env: { PUBLIC_BASE_URL: PUBLIC_URL } });
    try {
      expect(service.output.some((line) => line.includes('using the SECRETS_KEY generated before'))).toBe(true);
      const { reply } = await deliver(service.baseUrl, 'github', producers.github, `restart-${randomBytes(4).toString('hex')}`);
      expect([reply.status, reply.json?.inbound?.scheme]).toEqual([200, 'github']);
    } finally {
      await service.stop();
      for (const dir of [dataDir, `${dataDir}.config`]) rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('inbound auth, distributed (gateway, control, executor and results over RabbitMQ)', () => {
  const deployment = distributedDeployment('inbound');
  const keyed = { SECRETS_KEY: randomBytes(32).toString('base64'), PUBLIC_BASE_URL: PUBLIC_URL };
  const services: ServiceProcess[] = [];
  let gateway: ServiceProcess;
  let results: ServiceProcess;
  let control: Api;
  let producers: Record<KeyedInboundAuth['scheme'], Producer>;

  beforeAll(async () => {
    producers = await inboundProducers(KEY_SECRET);
    const [controlService, gatewayService, executor, resultsService] = await Promise.all([
      deployment.start('control', [], keyed),
      deployment.start('gateway', [], keyed),
      deployment.start('executor', [], keyed),
      // The results service holds no secrets: started without SECRETS_KEY, it must not make one.
      deployment.start('results'),
    ]);
    services.push(controlService, gatewayService, executor, resultsService);
    [gateway, results] = [gatewayService, resultsService];
    control = new Api(controlService.baseUrl);
    await setUp(control, producers);
  });
  afterAll(async () => {
    await Promise.all(services.map((service) => service.stop()));
    rmSync(deployment.dataDir, { recursive: true, force: true });
  });

  it('runs a delivery of every scheme signed by its provider once, shows the connector what was verified, and refuses the rest', async () => {
    expect(await checkEveryScheme(gateway.baseUrl, control, producers, 'distributed')).toEqual([]);
    expect(await authFailures(gateway.baseUrl)).toMatchObject({ bad_signature: 16, unknown_key: 2 });
  }, 60_000);

  it('never generates a SECRETS_KEY in a distributed service', () => {
    expect(results.output.some((line) => line.includes('SECRETS_KEY'))).toBe(false);
    expect(existsSync(join(`${results.dataDir}.config`, 'generic-integration', 'secrets-key'))).toBe(false);
  });
});
