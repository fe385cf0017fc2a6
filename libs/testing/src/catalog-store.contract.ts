import { DEFAULT_CONNECTOR_LIMITS } from '@gi/domain';
import type { StoreUnderTest } from './store-under-test';

/** The catalog: bots, integrations and their versions, drafts, quotas and signing secrets. Part of the store contract (store.contract.ts). */
export function describeCatalogStoreContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('catalog', () => {
    it('defines entities with the webhook fields always present', async () => {
      const { store, clock } = subject;
      const entity = await store.catalog.putEntity('bot-a', 'Order', ['Customer', 'RequestBody'], clock.now());
      expect(entity.fields).toEqual(['RequestParams', 'RequestBody', 'RequestHeaders', 'ResponseBody', 'RequestFiles', 'Customer']);
      expect(await store.catalog.getEntity('bot-a', 'Order')).toEqual(entity);
      expect(await store.catalog.getEntity('bot-b', 'Order')).toBeNull();
      await store.catalog.putEntity('bot-a', 'Order', [], clock.now());
      expect((await store.catalog.listEntities('bot-a')).map((e) => e.fields.length)).toEqual([5]);
    });

    it('versions integrations per deploy and reads any version', async () => {
      const { store, clock } = subject;
      const limits = { memoryMiB: 16, cpuSeconds: 5, responseBodyKiB: 100, logKiB: 8, pendingCalls: 2 };
      const settings = { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 60, allowedHosts: ['api.example.com'], limits, callbackUrl: null };
      const withCallback = await store.catalog.deployIntegration('bot-a', 'hooked', { ...settings, callbackUrl: 'https://hooks.example.com/x' }, clock.now());
      expect(await store.catalog.getIntegration('bot-a', 'hooked')).toEqual(withCallback);
      const v1 = await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now());
      const v2 = await store.catalog.deployIntegration('bot-a', 'ack', { ...settings, code: 'return 2' }, clock.now() + 1);
      await store.catalog.deployIntegration('bot-a', 'other', settings, clock.now());
      expect([v1.version, v2.version]).toEqual([1, 2]);
      expect((await store.catalog.getIntegration('bot-a', 'ack'))?.code).toBe('return 2');
      expect(await store.catalog.getIntegration('bot-a', 'ack', 1)).toEqual(v1);
      expect((await store.catalog.getIntegration('bot-a', 'ack', 1))?.limits).toEqual(limits);
      expect(await store.catalog.getIntegration('bot-b', 'ack')).toBeNull();
      expect(await store.catalog.resolveIntegration('bot-a', 'ack')).toEqual({ integrationId: 'ack', version: 2, entityName: 'Order', pool: 'default', callbackUrl: null });
      expect(await store.catalog.resolveIntegration('bot-a', 'hooked')).toMatchObject({ version: 1, callbackUrl: 'https://hooks.example.com/x' });
      expect(await store.catalog.resolveIntegration('bot-b', 'ack')).toBeNull();
      expect((await store.catalog.listIntegrations('bot-a')).map((i) => [i.integrationId, i.version])).toEqual([['ack', 2], ['hooked', 1], ['other', 1]]);
      expect((await store.catalog.listIntegrationVersions('bot-a', 'ack')).map((v) => v.version)).toEqual([2, 1]);
      expect(await store.catalog.listBots()).toEqual(['bot-a']);
    });

    it("keeps each version's inbound auth (none stored for bearer), resolves the latest's for calls, and carries it into drafts", async () => {
      const { store, clock } = subject;
      const settings = { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 60, allowedHosts: [], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };
      const github = { scheme: 'github' as const, secret: 'GITHUB_WEBHOOK_SECRET', previousSecret: 'GITHUB_WEBHOOK_SECRET_OLD', allowBearer: true };
      const hmac = { scheme: 'hmac' as const, secret: 'SIGNING_KEY', header: 'X-Signature', algorithm: 'sha512' as const, encoding: 'base64' as const, prefix: 'v1=', timestampHeader: 'X-Timestamp', toleranceSeconds: 60 };
      const v1 = await store.catalog.deployIntegration('bot-a', 'hook', { ...settings, inboundAuth: github }, clock.now());
      expect(v1.inboundAuth).toEqual(github);
      expect(await store.catalog.resolveIntegration('bot-a', 'hook')).toEqual({ integrationId: 'hook', version: 1, entityName: 'Order', pool: 'default', callbackUrl: null, inboundAuth: github });
      const v2 = await store.catalog.deployIntegration('bot-a', 'hook', { ...settings, inboundAuth: hmac }, clock.now() + 1);
      expect(await store.catalog.getIntegration('bot-a', 'hook')).toEqual(v2);
      expect((await store.catalog.resolveIntegration('bot-a', 'hook'))?.inboundAuth).toEqual(hmac);
      expect((await store.catalog.getIntegration('bot-a', 'hook', 1))?.inboundAuth).toEqual(github);
      // Bearer, the default, is stored as nothing: a version deployed with it reads as one deployed without.
      const v3 = await store.catalog.deployIntegration('bot-a', 'hook', { ...settings, inboundAuth: { scheme: 'bearer' } }, clock.now() + 2);
      expect(v3).not.toHaveProperty('inboundAuth');
      expect(await store.catalog.getIntegration('bot-a', 'hook')).not.toHaveProperty('inboundAuth');
      expect((await store.catalog.resolveIntegration('bot-a', 'hook'))?.inboundAuth).toBeUndefined();
      const draft = await store.catalog.putDraft('bot-a', 'hook', { ...settings, code: 'return 4', inboundAuth: github }, clock.now() + 3);
      expect((await store.catalog.getDraft('bot-a', 'hook'))?.inboundAuth).toEqual(github);
      expect((await store.catalog.publishDraft('bot-a', 'hook', draft.draftedAt, clock.now() + 4))?.inboundAuth).toEqual(github);
      expect((await store.catalog.resolveIntegration('bot-a', 'hook'))?.inboundAuth).toEqual(github);
    });

    it('keeps the source files of a bundled version with it, and none for a plain script', async () => {
      const { store, clock } = subject;
      const settings = { entityName: 'Order', code: 'Context.SetResponseEntity(null);', pool: 'default', timeoutSeconds: 60, allowedHosts: [], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };
      const sources = [
        { path: 'src/index.ts', content: "import { shout } from './shout';\nconst text: string = shout('é');\n" },
        { path: 'src/shout.ts', content: 'export const shout = (s: string) => s.toUpperCase() + "\u0000 ✓";\n' },
      ];
      const bundled = await store.catalog.deployIntegration('bot-a', 'ts', { ...settings, sources }, clock.now());
      expect(bundled.sources).toEqual(sources);
      const plain = await store.catalog.deployIntegration('bot-a', 'ts', { ...settings, sources: [] }, clock.now() + 1);
      expect(plain).not.toHaveProperty('sources');
      expect(await store.catalog.getIntegration('bot-a', 'ts', 1)).toEqual(bundled);
      expect(await store.catalog.getIntegration('bot-a', 'ts')).toEqual(plain);
      expect(await store.catalog.getIntegration('bot-a', 'ts')).not.toHaveProperty('sources');
      // A copy is kept: changing what was deployed changes nothing stored.
      sources[0].content = 'changed';
      expect((await store.catalog.getIntegration('bot-a', 'ts', 1))?.sources?.[0].content).toContain('shout');
    });
  });

  describe('drafts', () => {
    const settings = { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 60, allowedHosts: ['api.example.com'], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };

    it('keep one draft per integration beside the live version, a new one replacing it', async () => {
      const { store, clock } = subject;
      await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now());
      expect(await store.catalog.getDraft('bot-a', 'ack')).toBeNull();
      const sources = [{ path: 'src/index.ts', content: 'export default 2' }];
      await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'return 2' }, clock.now() + 1);
      const draft = await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'return 3', sources, limits: { ...settings.limits, memoryMiB: 32 } }, clock.now() + 2);
      expect(draft).toEqual({ botId: 'bot-a', integrationId: 'ack', draftedAt: clock.now() + 2, ...settings, code: 'return 3', sources, limits: { ...settings.limits, memoryMiB: 32 } });
      expect(await store.catalog.getDraft('bot-a', 'ack')).toEqual(draft);
      expect(await store.catalog.getDraft('bot-b', 'ack')).toBeNull();
      // Live calls keep the published version: the draft is no version.
      expect(await store.catalog.resolveIntegration('bot-a', 'ack')).toMatchObject({ version: 1 });
      expect((await store.catalog.getIntegration('bot-a', 'ack'))?.code).toBe('return 1');
      expect((await store.catalog.listIntegrationVersions('bot-a', 'ack')).map((v) => v.version)).toEqual([1]);
    });

    it('publish the draft as the next version, once, and only the draft it was asked for', async () => {
      const { store, clock } = subject;
      await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now());
      const older = await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'return 2' }, clock.now() + 1);
      const draft = await store.catalog.putDraft('bot-a', 'ack', { ...settings, code: 'return 3' }, clock.now() + 2);
      expect(await store.catalog.publishDraft('bot-a', 'ack', older.draftedAt, clock.now() + 3)).toBeNull();
      const published = await store.catalog.publishDraft('bot-a', 'ack', draft.draftedAt, clock.now() + 3);
      expect(published).toEqual({ botId: 'bot-a', integrationId: 'ack', version: 2, deployedAt: clock.now() + 3, ...settings, code: 'return 3' });
      expect(await store.catalog.getIntegration('bot-a', 'ack')).toEqual(published);
      expect((await store.catalog.getIntegration('bot-a', 'ack', 1))?.code).toBe('return 1');
      expect(await store.catalog.getDraft('bot-a', 'ack')).toBeNull();
      expect(await store.catalog.publishDraft('bot-a', 'ack', draft.draftedAt, clock.now() + 4)).toBeNull();
      expect((await store.catalog.listIntegrationVersions('bot-a', 'ack')).map((v) => v.version)).toEqual([2, 1]);
    });

    it('go with the integration and with the bot when they are deleted', async () => {
      const { store, clock } = subject;
      for (const bot of ['bot-a', 'bot-b']) {
        await store.catalog.deployIntegration(bot, 'ack', settings, clock.now());
        await store.catalog.putDraft(bot, 'ack', { ...settings, code: 'return 2' }, clock.now());
      }
      await store.catalog.deleteIntegration('bot-a', 'ack');
      expect(await store.catalog.getDraft('bot-a', 'ack')).toBeNull();
      await store.catalog.putDraft('bot-a', 'other', settings, clock.now());
      await store.catalog.deleteBot('bot-a');
      expect(await store.catalog.getDraft('bot-a', 'other')).toBeNull();
      expect(await store.catalog.getDraft('bot-b', 'ack')).not.toBeNull();
    });
  });

  describe('quotas', () => {
    it('keeps quotas per bot and per token, and all-null returns them to the defaults', async () => {
      const { store, clock } = subject;
      const none = { ratePerSecond: null, burst: null, maxInFlight: null };
      expect(await store.catalog.getQuotas('bot-a')).toEqual({ bot: none, tokens: {} });
      await store.catalog.putQuotas('bot-a', null, { ratePerSecond: 2.5, burst: 5, maxInFlight: null }, clock.now());
      await store.catalog.putQuotas('bot-a', 't1', { ratePerSecond: null, burst: null, maxInFlight: 3 }, clock.now());
      await store.catalog.putQuotas('bot-b', 't1', { ratePerSecond: 1, burst: null, maxInFlight: null }, clock.now());
      expect(await store.catalog.getQuotas('bot-a')).toEqual({
        bot: { ratePerSecond: 2.5, burst: 5, maxInFlight: null },
        tokens: { t1: { ratePerSecond: null, burst: null, maxInFlight: 3 } },
      });
      await store.catalog.putQuotas('bot-a', null, { ratePerSecond: 1, burst: null, maxInFlight: 9 }, clock.now());
      await store.catalog.putQuotas('bot-a', 't1', none, clock.now());
      expect(await store.catalog.getQuotas('bot-a')).toEqual({ bot: { ratePerSecond: 1, burst: null, maxInFlight: 9 }, tokens: {} });
      expect((await store.catalog.getQuotas('bot-b')).tokens).toEqual({ t1: { ratePerSecond: 1, burst: null, maxInFlight: null } });
    });
  });

  describe('signing secrets', () => {
    it('keep the newest secret, and the ones before it until their end', async () => {
      const { store, clock } = subject;
      expect(await store.catalog.getSigningSecrets('bot-a', clock.now())).toEqual([]);
      const first = { secret: 'whsec_first', createdAt: clock.now(), expiresAt: null };
      await store.catalog.rotateSigningSecret('bot-a', first, clock.now());
      expect(await store.catalog.getSigningSecrets('bot-a', clock.now())).toEqual([first]);
      clock.advance(1000);
      const second = { secret: 'whsec_second', createdAt: clock.now(), expiresAt: null };
      await store.catalog.rotateSigningSecret('bot-a', second, clock.now() + 60_000);
      expect(await store.catalog.getSigningSecrets('bot-a', clock.now())).toEqual([second, { ...first, expiresAt: clock.now() + 60_000 }]);
      expect(await store.catalog.getSigningSecrets('bot-b', clock.now())).toEqual([]);
      clock.advance(60_000);
      expect(await store.catalog.getSigningSecrets('bot-a', clock.now())).toEqual([second]);
    });

    it('list every bot\'s valid secrets, and replace one\'s stored form only while it is the one expected', async () => {
      const { store, clock } = subject;
      await store.catalog.rotateSigningSecret('bot-a', { secret: 'whsec_a1', createdAt: clock.now(), expiresAt: null }, clock.now());
      await store.catalog.rotateSigningSecret('bot-b', { secret: 'whsec_b1', createdAt: clock.now(), expiresAt: null }, clock.now());
      clock.advance(1000);
      await store.catalog.rotateSigningSecret('bot-a', { secret: 'whsec_a2', createdAt: clock.now(), expiresAt: null }, clock.now() + 60_000);
      expect((await store.catalog.listSigningSecrets(clock.now())).map((s) => [s.botId, s.secret])).toEqual([
        ['bot-a', 'whsec_a2'],
        ['bot-a', 'whsec_a1'],
        ['bot-b', 'whsec_b1'],
      ]);
      expect(await store.catalog.resealSigningSecret('bot-a', 'whsec_b1', 'sealed')).toBe(false);
      expect(await store.catalog.resealSigningSecret('bot-a', 'whsec_a1', 'sealed-a1')).toBe(true);
      expect(await store.catalog.getSigningSecrets('bot-a', clock.now())).toEqual([
        { secret: 'whsec_a2', createdAt: clock.now(), expiresAt: null },
        { secret: 'sealed-a1', createdAt: clock.now() - 1000, expiresAt: clock.now() + 60_000 },
      ]);
      clock.advance(60_000);
      expect((await store.catalog.listSigningSecrets(clock.now())).map((s) => s.secret)).toEqual(['whsec_a2', 'whsec_b1']);
    });
  });
}
