import { createHmac } from 'node:crypto';
import { SecretCipher, SecretVault } from '@gi/auth';
import type { JobMessage } from '@gi/contracts';
import { DEFAULT_JOURNAL_LIMITS } from '@gi/domain';
import type { InboundAuth } from '@gi/domain';
import { SmallServices } from '@gi/testing';
import type { GatewayDeps } from './gateway.deps';
import { gatewayRouter } from './gateway.router';

/**
 * Webhook calls of integrations with an inbound scheme, through the gateway router: what passes is
 * stored with what was verified, without its signature header; a redelivery runs nothing; every refusal
 * is a 401 naming its reason, stores nothing and is counted.
 */

const PATH = '/api/Platform/bot-a/Order/ack/GenericIntegration';
const SECRET = 'gh-webhook-secret';
const BODY = JSON.stringify({ action: 'opened', number: 7 });
const sign = (body: string, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
const stripeHeader = (body: string, at: number, secret = SECRET) => `t=${Math.floor(at / 1000)},v1=${createHmac('sha256', secret).update(`${Math.floor(at / 1000)}.${body}`).digest('hex')}`;

async function gateway(inboundAuth: InboundAuth, secrets: Record<string, string> = { GH_SECRET: SECRET }) {
  const world = new SmallServices();
  const { token } = await world.bot('bot-a', { inboundAuth });
  const vault = new SecretVault(world.store.secrets, new SecretCipher(Buffer.alloc(32, 9)));
  for (const [name, value] of Object.entries(secrets)) await vault.set({ botId: 'bot-a', integrationId: 'ack', name }, value, world.clock.now());
  const jobs: JobMessage[] = [];
  await world.bus.consume('default', 4, async (job) => {
    jobs.push(job);
    return 'ack';
  });
  const deps: GatewayDeps = {
    store: world.store,
    bus: world.bus,
    tokens: world.tokens,
    secrets: vault,
    waiter: world.waiter,
    clock: world.clock,
    logger: world.logger,
    settings: {
      platformSegment: 'Platform',
      platformVersion: [9, 19],
      syncTimeoutMs: 5_000,
      maxBodyBytes: 1024 * 1024,
      bodyTimeouts: { idleMs: 10_000, totalMs: 60_000 },
      maxJsonDepth: 64,
      journalLimits: DEFAULT_JOURNAL_LIMITS,
      invocationTtlMs: 3600_000,
      idempotencyKeyTtlMs: 3600_000,
      publicBaseUrl: 'https://hooks.example.com',
    },
  };
  const call = world.serve([gatewayRouter(deps)]);
  const post = (headers: Record<string, string | string[]>, body = BODY, path = `${PATH}?asyncResponse=true`) =>
    call({ method: 'POST', path, headers: { 'content-type': 'application/json', ...headers }, body });
  const stored = async () => (await world.store.invocations.list('bot-a', { limit: 100 })).length;
  const failures = async () => Object.fromEntries((await world.metrics.authFailures.get()).values.map((v) => [v.labels.reason, v.value]));
  return { world, token, jobs, post, stored, failures };
}

const GITHUB: InboundAuth = { scheme: 'github', secret: 'GH_SECRET' };

describe('a call of an integration verified by its inbound scheme', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('is stored with its scheme and delivery id, without its signature header, with no token', async () => {
    const g = await gateway(GITHUB);
    world = g.world;
    const reply = await g.post({ 'X-Hub-Signature-256': sign(BODY), 'X-GitHub-Delivery': 'd-1', 'X-GitHub-Event': 'issues' });
    expect(reply.status).toBe(202);
    const invocation = await g.world.store.invocations.get({ botId: 'bot-a', id: JSON.parse(reply.body).invocationId });
    expect(invocation).toMatchObject({ tokenId: null, inbound: { scheme: 'github', deliveryId: 'd-1' }, rawBody: BODY, entity: { RequestBody: { action: 'opened', number: 7 } } });
    const headers = new URLSearchParams(invocation?.entity.RequestHeaders);
    expect([...headers.keys()]).toEqual(expect.arrayContaining(['X-GitHub-Delivery', 'X-GitHub-Event']));
    expect(headers.has('X-Hub-Signature-256')).toBe(false);
    expect(invocation?.entity.RequestHeaders).not.toContain(sign(BODY).slice(7));
  });

  it('runs a redelivery of the same delivery id nothing: it answers with the first invocation', async () => {
    const g = await gateway(GITHUB);
    world = g.world;
    const first = await g.post({ 'X-Hub-Signature-256': sign(BODY), 'X-GitHub-Delivery': 'd-7' });
    const again = await g.post({ 'X-Hub-Signature-256': sign(BODY), 'X-GitHub-Delivery': 'd-7' });
    expect(first.status).toBe(202);
    // The async repeat of a delivery still running: 409 with the first invocation, as for an Idempotency-Key.
    expect(again.status).toBe(409);
    expect(JSON.parse(again.body).invocationId).toBe(JSON.parse(first.body).invocationId);
    const other = await g.post({ 'X-Hub-Signature-256': sign(BODY), 'X-GitHub-Delivery': 'd-8' });
    expect(other.status).toBe(202);
    expect(await g.stored()).toBe(2);
    expect(g.jobs).toHaveLength(2);
  });

  it("deduplicates Stripe's retries by the event id in the body, although each is signed anew", async () => {
    const g = await gateway({ scheme: 'stripe', secret: 'GH_SECRET', toleranceSeconds: 300 });
    world = g.world;
    const event = JSON.stringify({ id: 'evt_123', type: 'charge.succeeded' });
    const now = g.world.clock.now();
    const first = await g.post({ 'Stripe-Signature': stripeHeader(event, now) }, event);
    const retry = await g.post({ 'Stripe-Signature': stripeHeader(event, now + 60_000) }, event);
    expect([first.status, retry.status]).toEqual([202, 409]);
    expect(JSON.parse(retry.body).invocationId).toBe(JSON.parse(first.body).invocationId);
    expect(await g.stored()).toBe(1);
  });

  it("deduplicates HubSpot's retries by their events' ids, although the retry's body counts its attempt up", async () => {
    const g = await gateway({ scheme: 'hubspot-v3', secret: 'GH_SECRET', toleranceSeconds: 300 });
    world = g.world;
    const url = `https://hooks.example.com${PATH}?asyncResponse=true`;
    const send = (attemptNumber: number) => {
      const at = g.world.clock.now();
      const body = JSON.stringify([{ eventId: 100, subscriptionId: 4, attemptNumber }]);
      const signature = createHmac('sha256', SECRET).update(`POST${url}${body}${at}`).digest('base64');
      return g.post({ 'X-HubSpot-Signature-v3': signature, 'X-HubSpot-Request-Timestamp': String(at) }, body);
    };
    const first = await send(0);
    const retry = await send(1);
    expect([first.status, retry.status]).toEqual([202, 409]);
    expect(JSON.parse(retry.body).invocationId).toBe(JSON.parse(first.body).invocationId);
    expect(await g.stored()).toBe(1);
  });

  it('refuses a tampered body, the wrong secret, a missing or doubled header and a bearer token alone: 401s naming the reason, nothing stored, each counted', async () => {
    const g = await gateway(GITHUB);
    world = g.world;
    const refusals: Array<[Record<string, string | string[]>, string, string]> = [
      [{ 'X-Hub-Signature-256': sign(BODY) }, BODY.replace('7', '8'), 'bad-signature'],
      [{ 'X-Hub-Signature-256': sign(BODY, 'another secret') }, BODY, 'bad-signature'],
      [{ 'X-Hub-Signature-256': [sign(BODY), sign(BODY)] }, BODY, 'bad-signature'],
      [{}, BODY, 'missing-signature'],
      [{ authorization: `Bearer ${g.token}` }, BODY, 'missing-signature'],
    ];
    for (const [headers, body, type] of refusals) {
      const reply = await g.post(headers, body);
      expect([reply.status, JSON.parse(reply.body).type]).toEqual([401, `urn:gi:problem:${type}`]);
      expect(reply.headers['www-authenticate']).toBe('Signature realm="generic-integration", scheme="github"');
      expect(reply.body).not.toContain(SECRET);
    }
    expect(await g.stored()).toBe(0);
    expect(g.jobs).toHaveLength(0);
    expect(await g.failures()).toEqual({ bad_signature: 3, missing_signature: 2 });
  });

  it('refuses a signed time outside the tolerance, and a call whose key secret is not set (unknown key)', async () => {
    const g = await gateway({ scheme: 'stripe', secret: 'GH_SECRET', toleranceSeconds: 300 });
    world = g.world;
    const event = JSON.stringify({ id: 'evt_1' });
    const now = g.world.clock.now();
    // Two seconds beyond the tolerance: the header holds whole seconds (up to 999 ms off), and the gateway's clock has
    // moved on by its check (one second beyond failed now and then under load).
    for (const at of [now - 302_000, now + 302_000]) {
      const reply = await g.post({ 'Stripe-Signature': stripeHeader(event, at) }, event);
      expect([reply.status, JSON.parse(reply.body).type]).toEqual([401, 'urn:gi:problem:timestamp-outside-tolerance']);
    }
    const unset = await gateway({ scheme: 'github', secret: 'NOT_SET' });
    const reply = await unset.post({ 'X-Hub-Signature-256': sign(BODY) });
    expect([reply.status, JSON.parse(reply.body).type]).toEqual([401, 'urn:gi:problem:unknown-key']);
    await unset.world.close();
    expect(await g.failures()).toEqual({ timestamp_outside_tolerance: 2 });
  });

  it('takes a token of the bot too when the integration allows both, and still checks a signature it is sent', async () => {
    const g = await gateway({ ...GITHUB, allowBearer: true });
    world = g.world;
    expect((await g.post({ authorization: `Bearer ${g.token}` })).status).toBe(202);
    expect((await g.post({ authorization: `Bearer ${g.token}`, 'X-Hub-Signature-256': sign(BODY, 'wrong') })).status).toBe(401);
    expect((await g.post({})).status).toBe(401);
    const [bearerCall] = await g.world.store.invocations.list('bot-a', { limit: 10 });
    expect(await g.world.store.invocations.get({ botId: 'bot-a', id: bearerCall.id })).toMatchObject({ inbound: null });
  });

  it('refuses a signed scheme on the file transfer endpoint, which has no single body to check', async () => {
    const g = await gateway(GITHUB);
    world = g.world;
    const reply = await g.post({ 'X-Hub-Signature-256': sign(BODY), 'content-type': 'multipart/form-data; boundary=x' }, BODY, '/api/Platform/bot-a/Order/ack/GenericIntegrationFileTransfer');
    expect([reply.status, JSON.parse(reply.body).type]).toEqual([401, 'urn:gi:problem:missing-signature']);
  });

  it('checks an API key on the headers alone, and keeps the key out of RequestHeaders', async () => {
    const g = await gateway({ scheme: 'api-key', secret: 'GH_SECRET', header: 'X-API-Key' });
    world = g.world;
    expect(JSON.parse((await g.post({ 'x-api-key': 'nope' })).body).type).toBe('urn:gi:problem:unknown-key');
    const reply = await g.post({ 'X-API-Key': SECRET });
    expect(reply.status).toBe(202);
    const invocation = await g.world.store.invocations.get({ botId: 'bot-a', id: JSON.parse(reply.body).invocationId });
    expect(invocation?.entity.RequestHeaders).not.toContain(SECRET);
    expect(invocation?.inbound).toEqual({ scheme: 'api-key', deliveryId: null });
  });
});
