import { DEFAULT_CONNECTOR_LIMITS } from '@gi/domain';
import type { StoreUnderTest } from './store-under-test';

/** Deleting a bot, across the ports that hold its data (catalog, secrets, tokens). Part of the store contract (store.contract.ts). */
export function describeBotDeletionContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('deletions', () => {
    const settings = { entityName: 'Order', code: 'return 1', pool: 'default', timeoutSeconds: 60, allowedHosts: [], limits: { ...DEFAULT_CONNECTOR_LIMITS }, callbackUrl: null };

    it('delete an entity, and every version of an integration, of one bot only', async () => {
      const { store, clock } = subject;
      for (const bot of ['bot-a', 'bot-b']) {
        await store.catalog.putEntity(bot, 'Order', [], clock.now());
        await store.catalog.deployIntegration(bot, 'ack', settings, clock.now());
        await store.catalog.deployIntegration(bot, 'ack', { ...settings, code: 'return 2' }, clock.now());
      }
      await store.catalog.deployIntegration('bot-a', 'keep', settings, clock.now());
      expect(await store.catalog.deleteIntegration('bot-a', 'ack')).toBe(2);
      expect(await store.catalog.deleteIntegration('bot-a', 'ack')).toBe(0);
      expect(await store.catalog.getIntegration('bot-a', 'ack')).toBeNull();
      expect(await store.catalog.getIntegration('bot-a', 'ack', 1)).toBeNull();
      expect(await store.catalog.resolveIntegration('bot-a', 'ack')).toBeNull();
      expect(await store.catalog.listIntegrationVersions('bot-a', 'ack')).toEqual([]);
      expect((await store.catalog.listIntegrations('bot-a')).map((i) => i.integrationId)).toEqual(['keep']);
      expect((await store.catalog.getIntegration('bot-b', 'ack'))?.version).toBe(2);
      expect(await store.catalog.deleteEntity('bot-a', 'Order')).toBe(true);
      expect(await store.catalog.deleteEntity('bot-a', 'Order')).toBe(false);
      expect(await store.catalog.getEntity('bot-a', 'Order')).toBeNull();
      expect(await store.catalog.getEntity('bot-b', 'Order')).not.toBeNull();
    });

    it('never reuse a version number: a deploy after a deletion goes on from the last one', async () => {
      const { store, clock } = subject;
      await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now());
      await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now());
      await store.catalog.deleteIntegration('bot-a', 'ack');
      expect((await store.catalog.deployIntegration('bot-a', 'ack', { ...settings, code: 'return 3' }, clock.now())).version).toBe(3);
      expect((await store.catalog.listIntegrationVersions('bot-a', 'ack')).map((v) => v.version)).toEqual([3]);
      await store.catalog.deleteBot('bot-a');
      expect((await store.catalog.deployIntegration('bot-a', 'ack', settings, clock.now())).version).toBe(4);
      // Another bot's integration of the same id numbers its own.
      expect((await store.catalog.deployIntegration('bot-b', 'ack', settings, clock.now())).version).toBe(1);
    });

    it("delete a bot's whole catalog, tokens and secrets, and nothing of another bot's", async () => {
      const { store, clock } = subject;
      const now = clock.now();
      for (const bot of ['bot-a', 'bot-b']) {
        await store.catalog.putEntity(bot, 'Order', [], now);
        await store.catalog.deployIntegration(bot, 'ack', settings, now);
        await store.catalog.putQuotas(bot, null, { ratePerSecond: 1, burst: null, maxInFlight: null }, now);
        await store.catalog.rotateSigningSecret(bot, { secret: `whsec_${bot}`, createdAt: now, expiresAt: null }, now);
        await store.tokens.create({ botId: bot, tokenId: 't1', label: null, createdAt: now, expiresAt: null, revokedAt: null });
        await store.secrets.put({ botId: bot, integrationId: null, name: 'SHARED' }, 's', now, 10);
        await store.secrets.put({ botId: bot, integrationId: 'ack', name: 'OWN' }, 's', now, 10);
      }
      await store.catalog.deleteBot('bot-a');
      expect(await store.tokens.deleteAll('bot-a')).toBe(1);
      expect(await store.secrets.deleteAll('bot-a')).toBe(2);
      expect(await store.catalog.listEntities('bot-a')).toEqual([]);
      expect(await store.catalog.listIntegrations('bot-a')).toEqual([]);
      expect((await store.catalog.getQuotas('bot-a')).bot.ratePerSecond).toBeNull();
      expect(await store.catalog.getSigningSecrets('bot-a', now)).toEqual([]);
      expect(await store.tokens.list('bot-a')).toEqual([]);
      expect(await store.secrets.listForRun('bot-a', 'ack')).toEqual([]);
      expect(await store.catalog.listBots()).toEqual(['bot-b']);
      expect(await store.catalog.listEntities('bot-b')).toHaveLength(1);
      expect(await store.catalog.listIntegrations('bot-b')).toHaveLength(1);
      expect((await store.catalog.getQuotas('bot-b')).bot.ratePerSecond).toBe(1);
      expect(await store.catalog.getSigningSecrets('bot-b', now)).toHaveLength(1);
      expect(await store.tokens.list('bot-b')).toHaveLength(1);
      expect(await store.secrets.listForRun('bot-b', 'ack')).toHaveLength(2);
    });

    it("delete one integration's secrets, not the bot's nor another integration's", async () => {
      const { store, clock } = subject;
      await store.secrets.put({ botId: 'bot-a', integrationId: null, name: 'SHARED' }, 's', clock.now(), 10);
      await store.secrets.put({ botId: 'bot-a', integrationId: 'ack', name: 'A' }, 's', clock.now(), 10);
      await store.secrets.put({ botId: 'bot-a', integrationId: 'ack', name: 'B' }, 's', clock.now(), 10);
      await store.secrets.put({ botId: 'bot-a', integrationId: 'crm', name: 'A' }, 's', clock.now(), 10);
      expect(await store.secrets.deleteAll('bot-a', 'ack')).toBe(2);
      expect(await store.secrets.list({ botId: 'bot-a', integrationId: 'ack' })).toEqual([]);
      expect(await store.secrets.list({ botId: 'bot-a', integrationId: null })).toHaveLength(1);
      expect(await store.secrets.list({ botId: 'bot-a', integrationId: 'crm' })).toHaveLength(1);
    });
  });
}
