import { newInvocation, SmallServices } from '@gi/testing';
import { controlApp as control } from './control-app.fixture';

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

  it('keeps the sources a bundle was built from and shows them with the version, not in listings', async () => {
    const c = control({ maxBodyBytes: 4 * 1024 * 1024 });
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Order', {});
    const sources = [
      { path: 'src/index.ts', content: "import { ack } from './ack';\nack();\n" },
      { path: 'src/ack.ts', content: 'export const ack = (): void => Context.SetResponseEntity(null);\n' },
    ];
    const deployed = await c.admin('PUT', '/bots/bot-a/integrations/ts', { entityName: 'Order', code: 'Context.SetResponseEntity(null);', sources });
    expect(deployed.status).toBe(200);
    expect(deployed.json).not.toHaveProperty('sources');
    expect((await c.admin('GET', '/bots/bot-a/integrations')).json.integrations[0]).not.toHaveProperty('sources');
    expect((await c.admin('GET', '/bots/bot-a/integrations/ts')).json).toMatchObject({ code: 'Context.SetResponseEntity(null);', sources });
    await c.admin('PUT', '/bots/bot-a/integrations/ts', { entityName: 'Order', code: 'Context.SetResponseEntity(null);' });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ts')).json.sources).toEqual([]);
    expect((await c.admin('GET', '/bots/bot-a/integrations/ts?version=1')).json.sources).toEqual(sources);

    const deploy = (body: object) => c.admin('PUT', '/bots/bot-a/integrations/ts', { entityName: 'Order', code: 'x', ...body });
    const bigCode = await deploy({ code: `// ${'é'.repeat(512 * 1024)}` });
    expect(bigCode.status).toBe(413);
    expect(bigCode.json.detail).toBe('Cannot deploy: the connector code is 1,048,579 bytes, over the limit of 1 MiB (1,048,576 bytes); for a bundle, import less of large packages or use smaller ones.');
    const bigSources = await deploy({ sources: [{ path: 'a.ts', content: 'x'.repeat(600 * 1024) }, { path: 'b.ts', content: 'x'.repeat(600 * 1024) }] });
    expect(bigSources.status).toBe(413);
    expect(bigSources.json.detail).toContain('the source files are 1,228,800 bytes together, over the limit of 1 MiB (1,048,576 bytes)');
    const many = await deploy({ sources: Array.from({ length: 101 }, (_, i) => ({ path: `f${i}.ts`, content: '' })) });
    expect(many.status).toBe(400);
    expect(many.json.detail).toBe('sources: at most 100 files');
    const badPaths = await deploy({ sources: [{ path: '/etc/passwd', content: '' }, { path: 'src/../x.ts', content: '' }] });
    expect(badPaths.json.detail).toBe('sources.0.path: must be relative to the project root; sources.1.path: must be a file path under the project root, without . or .. parts, such as src/index.ts');
    expect((await deploy({ sources: [{ path: 'a.ts', content: '' }, { path: 'a.ts', content: '' }] })).json.detail).toBe('sources: each path at most once');
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
    expect(json.eventUrl).toBe(`${root}/GenericIntegrationEvent?invocationId={invocationId}&name={name}`);
    expect(json.integrations[0].urls).toEqual({
      sync: `${root}/Order/ack/GenericIntegration`,
      async: `${root}/Order/ack/GenericIntegration?asyncResponse=true`,
      fileTransfer: `${root}/Order/ack/GenericIntegrationFileTransfer`,
      poll: `${root}/GetGenericIntegrationResponse?invocationId={invocationId}`,
      event: `${root}/GenericIntegrationEvent?invocationId={invocationId}&name={name}`,
    });
  });

  it("deploys an integration's inbound auth with its defaults filled in, shows bearer for one without, and refuses what cannot work", async () => {
    const c = control();
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Order', {});
    const deploy = (inboundAuth?: unknown) => c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x', ...(inboundAuth !== undefined && { inboundAuth }) });
    expect((await deploy()).json.inboundAuth).toEqual({ scheme: 'bearer' });
    expect((await deploy({ scheme: 'stripe', secret: 'STRIPE_SECRET' })).json.inboundAuth).toEqual({ scheme: 'stripe', secret: 'STRIPE_SECRET', toleranceSeconds: 300 });
    expect((await deploy({ scheme: 'hmac', secret: 'K', header: 'X-Sig' })).json.inboundAuth).toEqual({ scheme: 'hmac', secret: 'K', header: 'X-Sig', algorithm: 'sha256', encoding: 'hex' });
    expect((await deploy({ scheme: 'api-key', secret: 'K', previousSecret: 'K_OLD', allowBearer: true })).json.inboundAuth).toEqual({
      scheme: 'api-key',
      secret: 'K',
      previousSecret: 'K_OLD',
      allowBearer: true,
      header: 'X-API-Key',
    });
    expect((await c.admin('GET', '/bots/bot-a/integrations/ack')).json.inboundAuth).toMatchObject({ scheme: 'api-key' });
    expect((await deploy({ scheme: 'bearer' })).json.inboundAuth).toEqual({ scheme: 'bearer' });
    const refusals: Array<[unknown, string]> = [
      [{ scheme: 'github' }, 'inboundAuth.secret'],
      [{ scheme: 'github', secret: 'lower-case' }, 'inboundAuth.secret: the name of a connector secret'],
      [{ scheme: 'github', secret: 'A', previousSecret: 'A' }, 'inboundAuth.previousSecret: the previous secret must be another secret'],
      [{ scheme: 'stripe', secret: 'A', toleranceSeconds: 0 }, 'inboundAuth.toleranceSeconds'],
      [{ scheme: 'stripe', secret: 'A', toleranceSeconds: 3601 }, 'inboundAuth.toleranceSeconds'],
      [{ scheme: 'hmac', secret: 'A', header: 'Content-Type' }, 'inboundAuth.header: a header of its own'],
      [{ scheme: 'hmac', secret: 'A', header: 'X-Sig', algorithm: 'md5' }, 'inboundAuth.algorithm'],
      [{ scheme: 'hmac', secret: 'A', header: 'X-Sig', toleranceSeconds: 60 }, 'inboundAuth.toleranceSeconds: a tolerance needs a timestampHeader'],
      [{ scheme: 'github', secret: 'A', header: 'X-Sig' }, 'inboundAuth'],
      [{ scheme: 'oauth', secret: 'A' }, 'inboundAuth.scheme'],
    ];
    for (const [inboundAuth, detail] of refusals) {
      const refused = await deploy(inboundAuth);
      expect([refused.status, refused.json.detail]).toEqual([400, expect.stringContaining(detail)]);
    }
  });

  it('refuses a scheme that signs the URL without PUBLIC_BASE_URL to rebuild it from, never trusting Host', async () => {
    const c = control({ publicBaseUrl: null });
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Order', {});
    for (const scheme of ['twilio', 'hubspot-v3']) {
      const refused = await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x', inboundAuth: { scheme, secret: 'KEY' } });
      expect([refused.status, refused.json.detail]).toEqual([400, expect.stringContaining('PUBLIC_BASE_URL')]);
    }
    expect((await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x', inboundAuth: { scheme: 'github', secret: 'KEY' } })).status).toBe(200);
  });

  it('shows per integration its scheme, what to paste into the provider, and whether the secrets holding its key are set', async () => {
    const c = control();
    world = c.world;
    await c.admin('PUT', '/bots/bot-a/entities/Order', {});
    await c.admin('PUT', '/bots/bot-a/integrations/ack', { entityName: 'Order', code: 'x' });
    await c.admin('PUT', '/bots/bot-a/integrations/gh', { entityName: 'Order', code: 'x', inboundAuth: { scheme: 'github', secret: 'GH_SECRET', previousSecret: 'GH_OLD' } });
    await c.admin('PUT', '/bots/bot-a/integrations/gh/secrets/GH_SECRET', { value: 'do-not-show-0123456789' });
    await c.admin('PUT', '/bots/bot-a/secrets/GH_OLD', { value: 'do-not-show-either-01234' });
    const reply = await c.admin('GET', '/bots/bot-a/webhook');
    const [ack, gh] = reply.json.integrations;
    expect(ack.inboundAuth).toMatchObject({ scheme: 'bearer', secrets: [] });
    expect(gh.inboundAuth).toEqual({
      scheme: 'github',
      provider: 'GitHub',
      fields: [
        { label: 'Payload URL', value: 'https://hooks.example.com/api/Platform/bot-a/Order/gh/GenericIntegration' },
        { label: 'Content type', value: 'application/json' },
        { label: 'Secret', value: 'the value of connector secret GH_SECRET' },
      ],
      secrets: [
        { name: 'GH_SECRET', set: true },
        { name: 'GH_OLD', set: true },
      ],
      note: expect.stringContaining('Settings > Webhooks'),
    });
    expect(reply.body).not.toContain('do-not-show');
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
    expect((await c.admin('GET', `/bots/bot-a/invocations/${inv.id}`)).json).toMatchObject({ id: inv.id, entity: JSON.parse(inv.entityJson), logs: [] });
    expect((await c.admin('DELETE', `/bots/bot-a/invocations/${inv.id}`)).json).toEqual({ invocationId: inv.id, status: 'Cancelled' });
    expect((await c.admin('DELETE', `/bots/bot-a/invocations/${inv.id}`)).status).toBe(200);
    expect((await c.admin('GET', '/bots/bot-a/invocations/nope')).status).toBe(404);
  });

  it('pages through invocations with nextBefore, filters kept', async () => {
    const c = control();
    world = c.world;
    const created = [];
    for (let i = 0; i < 5; i++) {
      created.push(newInvocation({ createdAt: c.world.clock.now() + i }));
    }
    for (const inv of created) await c.world.store.invocations.create(inv);
    const newestFirst = created.map((inv) => inv.id).reverse();
    const first = (await c.admin('GET', '/bots/bot-a/invocations?limit=2')).json;
    expect(first.invocations.map((s: { id: string }) => s.id)).toEqual(newestFirst.slice(0, 2));
    const second = (await c.admin('GET', `/bots/bot-a/invocations?limit=2&before=${encodeURIComponent(first.nextBefore)}`)).json;
    expect(second.invocations.map((s: { id: string }) => s.id)).toEqual(newestFirst.slice(2, 4));
    const last = (await c.admin('GET', `/bots/bot-a/invocations?limit=2&before=${encodeURIComponent(second.nextBefore)}`)).json;
    expect(last).toMatchObject({ invocations: [{ id: newestFirst[4] }], nextBefore: null });
    expect((await c.admin('GET', '/bots/bot-a/invocations?limit=5')).json.nextBefore).toBeNull();
    const bad = await c.admin('GET', '/bots/bot-a/invocations?before=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.json.errors).toEqual([{ field: 'before', message: 'the nextBefore value of a previous page' }]);
  });

  describe('connector secrets', () => {
    const VALUE = 'sk_live_do-not-show-0123456789';

    it('sets, lists (names and dates only), rotates and deletes a bot\'s and an integration\'s secrets', async () => {
      const c = control();
      world = c.world;
      const replies = [];
      const put = async (path: string, value: string) => {
        const reply = await c.admin('PUT', path, { value });
        replies.push(reply);
        return reply;
      };
      const created = await put('/bots/bot-a/secrets/API_KEY', VALUE);
      expect(created.status).toBe(201);
      expect(created.json).toEqual({ name: 'API_KEY', createdAt: expect.any(String), updatedAt: expect.any(String) });
      expect((await put('/bots/bot-a/integrations/crm/secrets/API_KEY', `${VALUE}-crm`)).status).toBe(201);
      expect((await put('/bots/bot-a/secrets/API_KEY', `${VALUE}-rotated`)).status).toBe(200);
      const bot = await c.admin('GET', '/bots/bot-a/secrets');
      const crm = await c.admin('GET', '/bots/bot-a/integrations/crm/secrets');
      replies.push(bot, crm);
      expect(bot.json.secrets).toEqual([{ name: 'API_KEY', createdAt: expect.any(String), updatedAt: expect.any(String) }]);
      expect(crm.json.secrets.map((s: { name: string }) => s.name)).toEqual(['API_KEY']);
      expect((await c.admin('GET', '/bots/bot-b/secrets')).json).toEqual({ secrets: [] });
      // Write-only: no reply holds a value, and the store holds none in clear.
      for (const reply of replies) expect(reply.body).not.toContain(VALUE);
      expect(JSON.stringify([...world.store.secrets.records.values()])).not.toContain('sk_live');
      expect(await c.admin('DELETE', '/bots/bot-a/integrations/crm/secrets/API_KEY')).toMatchObject({ status: 204 });
      const gone = await c.admin('DELETE', '/bots/bot-a/integrations/crm/secrets/API_KEY');
      expect(gone.status).toBe(404);
      expect(gone.json.detail).toBe("Integration 'crm' of bot 'bot-a' has no secret API_KEY.");
    });

    it('refuses bad names, values and bodies with a 400 naming the rule, never echoing the value', async () => {
      const c = control();
      world = c.world;
      const badName = await c.admin('PUT', '/bots/bot-a/secrets/api-key', { value: VALUE });
      expect(badName.status).toBe(400);
      expect(badName.json.detail).toMatch(/upper-case letters, digits and '_'/);
      const tooLong = await c.admin('PUT', '/bots/bot-a/secrets/BIG', { value: `${VALUE}${'x'.repeat(8192)}` });
      expect(tooLong.status).toBe(400);
      expect(tooLong.json.detail).toMatch(/at most 8192 bytes \(8 KiB\)/);
      expect(tooLong.body).not.toContain(VALUE);
      const notString = await c.admin('PUT', '/bots/bot-a/secrets/KEY', { value: 12345678, extra: VALUE });
      expect(notString.status).toBe(400);
      expect(notString.body).not.toContain(VALUE);
      expect((await c.admin('PUT', '/bots/bot-a/secrets/KEY', { value: '' })).status).toBe(400);
      expect((await c.admin('PUT', '/bots/bot-a/integrations/bad%20id/secrets/KEY', { value: VALUE })).status).toBe(400);
    });

    it('refuses a 101st secret in a scope with a 400 naming the limit', async () => {
      const c = control();
      world = c.world;
      for (let i = 0; i < 100; i++) expect((await c.admin('PUT', `/bots/bot-a/secrets/S${i}`, { value: 'v' })).status).toBe(201);
      const full = await c.admin('PUT', '/bots/bot-a/secrets/ONE_MORE', { value: 'v' });
      expect(full.status).toBe(400);
      expect(full.json.detail).toBe("Bot 'bot-a' holds 100 secrets, the most one may hold; delete one first.");
    });

    it('without SECRETS_KEY refuses writes with 409 secrets-not-configured, and still lists and deletes', async () => {
      const c = control({ secretsKey: null });
      world = c.world;
      const refused = await c.admin('PUT', '/bots/bot-a/secrets/API_KEY', { value: VALUE });
      expect(refused.status).toBe(409);
      expect(refused.json).toMatchObject({ type: 'urn:gi:problem:secrets-not-configured', detail: expect.stringContaining('No SECRETS_KEY is configured') });
      expect((await c.admin('GET', '/bots/bot-a/secrets')).json).toEqual({ secrets: [] });
      expect((await c.admin('POST', '/secrets/reseal', {})).status).toBe(409);
    });

    it('re-encrypts every value under the current key', async () => {
      const c = control();
      world = c.world;
      await c.admin('PUT', '/bots/bot-a/secrets/API_KEY', { value: VALUE });
      expect((await c.admin('POST', '/secrets/reseal', {})).json).toEqual({ resealed: 0, current: 1, unreadable: 0 });
    });

    it('stores a new callback signing secret sealed, and seals one stored in clear before SECRETS_KEY was set', async () => {
      const c = control();
      world = c.world;
      const now = world.clock.now();
      await world.store.catalog.rotateSigningSecret('bot-old', { secret: 'whsec_stored_in_clear', createdAt: now, expiresAt: null }, now);
      const created = await c.admin('POST', '/bots/bot-a/callback-secret');
      expect(created.json.secret).toMatch(/^whsec_/);
      const [stored] = await world.store.catalog.getSigningSecrets('bot-a', now);
      expect(stored.secret).toMatch(/^gi1:/);
      expect(stored.secret).not.toContain(created.json.secret.slice(6));
      expect((await c.admin('POST', '/secrets/reseal', {})).json).toEqual({ resealed: 1, current: 1, unreadable: 0 });
      const [migrated] = await world.store.catalog.getSigningSecrets('bot-old', now);
      expect(migrated.secret).toMatch(/^gi1:/);
    });
  });
});
