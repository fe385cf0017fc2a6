import { randomBytes } from 'node:crypto';
import { SecretCipher, SecretVault } from '@gi/auth';
import { newInvocation, SmallServices } from '@gi/testing';
import type { ControlDeps } from './control.deps';
import { controlRouter } from './control.router';

const ADMIN = 'control-test-admin-token-0123456789';

/** The admin API over in-memory ports; code containing "syntax error" does not compile. */
function control() {
  const world = new SmallServices();
  const deps: ControlDeps = {
    store: world.store,
    tokens: world.tokens,
    secrets: new SecretVault(world.store.secrets, new SecretCipher(randomBytes(32))),
    runtime: { compile: (code) => (code.includes('syntax error') ? { ok: false, message: 'unexpected token', line: 1, column: 8 } : { ok: true }) },
    bus: world.bus,
    clock: world.clock,
    settings: {
      adminToken: ADMIN,
      platformSegment: 'Platform',
      publicBaseUrl: 'https://hooks.example.com/',
      maxBodyBytes: 64 * 1024,
      bodyTimeouts: { idleMs: 10_000, totalMs: 60_000 },
      maxJsonDepth: 64,
      quotaDefaults: { ratePerSecond: 0, burst: null, maxInFlight: 0 },
    },
  };
  const call = world.serve([controlRouter(deps)]);
  const admin = async (method: string, path: string, body?: unknown) => {
    const reply = await call({
      method,
      path: `/admin${path}`,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { ...reply, json: reply.body ? JSON.parse(reply.body) : null };
  };
  return { world, call, admin };
}

describe('the admin API (the control router, per resource)', () => {
  let world: SmallServices | undefined;
  afterEach(async () => world?.close());

  it('answers 401 without the admin token', async () => {
    const c = control();
    world = c.world;
    expect((await c.call({ method: 'GET', path: '/admin/bots' })).status).toBe(401);
  });

  it('defines an entity, deploys versions of an integration and lists them without their code', async () => {
    const c = control();
    world = c.world;
    expect((await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x' })).status).toBe(400);
    expect((await c.admin('PUT', '/bots/bot-a/entities/Order', { fields: ['Note'] })).json.fields).toEqual([
      'RequestParams',
      'RequestBody',
      'RequestHeaders',
      'ResponseBody',
      'RequestFiles',
      'Note',
    ]);
    const notCompiled = await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'a syntax error' });
    expect(notCompiled.status).toBe(400);
    expect(notCompiled.json).toMatchObject({ line: 1, column: 8 });
    await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'Context.SetResponseEntity({});' });
    const second = await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'Context.SetResponseEntity({ v: 2 });' });
    expect(second.json).toMatchObject({ integrationId: 'ack', version: 2 });
    expect(second.json).not.toHaveProperty('code');
    const listed = await c.admin('GET', '/bots/bot-a/integrations');
    expect(listed.json.integrations.map((i: { version: number }) => i.version)).toEqual([2]);
    expect((await c.admin('GET', '/bots')).json).toEqual({ bots: ['bot-a'] });
  });

  it('needs a signing secret before an integration may name a callback URL', async () => {
    const c = control();
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Order', {});
    const deploy = () => c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x', callbackUrl: 'https://example.com/hook' });
    const refused = await deploy();
    expect(refused.status).toBe(400);
    expect(refused.json.detail).toContain('(POST /admin/bots/bot-a/callback-secret)');
    expect((await c.admin('POST', '/bots/bot-a/callback-secret')).status).toBe(201);
    expect((await deploy()).status).toBe(200);
  });

  it('shows the webhook URLs of every integration under the public base URL', async () => {
    const c = control();
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Order', {});
    await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x' });
    const { json } = await c.admin('GET', '/bots/bot-a/webhook');
    const root = 'https://hooks.example.com/api/Platform/bot-a';
    expect(json.pollUrl).toBe(`${root}/GetGenericIntegrationResponse?invocationId={invocationId}`);
    expect(json.integrations[0].urls).toEqual({
      sync: `${root}/Order/ack/GenericIntegration`,
      async: `${root}/Order/ack/GenericIntegration?asyncResponse=true`,
      fileTransfer: `${root}/Order/ack/GenericIntegrationFileTransfer`,
      poll: `${root}/GetGenericIntegrationResponse?invocationId={invocationId}`,
    });
  });

  it('mints, lists and revokes tokens, and sets their quotas', async () => {
    const c = control();
    world = c.world;
    const minted = await c.admin('POST', '/bots/bot-a/tokens', { label: 'partner' });
    expect(minted.status).toBe(201);
    const { tokenId } = minted.json;
    expect((await c.admin('PUT', `/bots/bot-a/tokens/${tokenId}/quotas`, { ratePerSecond: 5, burst: 10, maxInFlight: null })).json).toMatchObject({
      effective: { ratePerSecond: 5, burst: 10, maxInFlight: null },
    });
    expect((await c.admin('GET', '/bots/bot-a/quotas')).json.tokens).toEqual([
      { tokenId, quotas: { ratePerSecond: 5, burst: 10, maxInFlight: null }, effective: { ratePerSecond: 5, burst: 10, maxInFlight: null } },
    ]);
    expect((await c.admin('DELETE', `/bots/bot-a/tokens/${tokenId}`)).status).toBe(204);
    expect((await c.admin('GET', '/bots/bot-a/tokens')).json.tokens[0]).toMatchObject({ tokenId, label: 'partner', revokedAt: expect.any(String) });
  });

  it('lists, shows and cancels invocations', async () => {
    const c = control();
    world = c.world;
    const inv = newInvocation({ createdAt: c.world.clock.now() });
    await c.world.store.invocations.create(inv);
    expect((await c.admin('GET', '/bots/bot-a/invocations')).json.invocations).toMatchObject([{ id: inv.id, status: 'Queued' }]);
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}`)).json).toMatchObject({ id: inv.id, entity: inv.entity, logs: [] });
    expect((await c.admin('DELETE', `/bots/bot-a/invocations/${inv.id}`)).json).toEqual({ invocationId: inv.id, status: 'Cancelled' });
    expect((await c.admin('DELETE', `/bots/bot-a/invocations/${inv.id}`)).status).toBe(200);
    expect((await c.admin('GET', '/bots/bot-a/invocations/nope')).status).toBe(404);
  });
});
