import type { SecretRef } from '@gi/domain';
import type { StoreUnderTest } from './store-under-test';

/** Connector secrets: sealed values per bot and integration. Part of the store contract (store.contract.ts). */
export function describeSecretStoreContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('connector secrets', () => {
    const bot = { botId: 'bot-a', integrationId: null };
    const crm = { botId: 'bot-a', integrationId: 'crm' };

    it('set, list by scope, replace (keeping when it was created) and delete', async () => {
      const { store, clock } = subject;
      expect(await store.secrets.put({ ...bot, name: 'API_KEY' }, 'sealed-1', clock.now(), 10)).toBe('created');
      expect(await store.secrets.put({ ...crm, name: 'API_KEY' }, 'sealed-2', clock.now(), 10)).toBe('created');
      const createdAt = clock.now();
      clock.advance(1000);
      expect(await store.secrets.put({ ...bot, name: 'API_KEY' }, 'sealed-3', clock.now(), 10)).toBe('updated');
      expect(await store.secrets.list(bot)).toEqual([{ ...bot, name: 'API_KEY', sealed: 'sealed-3', createdAt, updatedAt: clock.now() }]);
      expect(await store.secrets.list(crm)).toEqual([{ ...crm, name: 'API_KEY', sealed: 'sealed-2', createdAt, updatedAt: createdAt }]);
      expect(await store.secrets.list({ botId: 'bot-b', integrationId: null })).toEqual([]);
      expect(await store.secrets.delete({ ...crm, name: 'API_KEY' })).toBe(true);
      expect(await store.secrets.delete({ ...crm, name: 'API_KEY' })).toBe(false);
      expect(await store.secrets.list(crm)).toEqual([]);
    });

    it('refuse a new name once the scope is full, but not a new value for a name it holds', async () => {
      const { store, clock } = subject;
      for (const name of ['A', 'B']) expect(await store.secrets.put({ ...crm, name }, 's', clock.now(), 2)).toBe('created');
      expect(await store.secrets.put({ ...crm, name: 'C' }, 's', clock.now(), 2)).toBe('full');
      expect(await store.secrets.put({ ...crm, name: 'A' }, 's2', clock.now(), 2)).toBe('updated');
      // Other scopes count apart.
      expect(await store.secrets.put({ ...bot, name: 'C' }, 's', clock.now(), 2)).toBe('created');
      expect((await store.secrets.list(crm)).map((s) => s.name)).toEqual(['A', 'B']);
    });

    it('give a run the bot\'s secrets and its own integration\'s, not another\'s', async () => {
      const { store, clock } = subject;
      await store.secrets.put({ ...bot, name: 'SHARED' }, 'b', clock.now(), 10);
      await store.secrets.put({ ...crm, name: 'OWN' }, 'c', clock.now(), 10);
      await store.secrets.put({ botId: 'bot-a', integrationId: 'erp', name: 'OTHER' }, 'e', clock.now(), 10);
      await store.secrets.put({ botId: 'bot-b', integrationId: null, name: 'FOREIGN' }, 'f', clock.now(), 10);
      const forRun = await store.secrets.listForRun('bot-a', 'crm');
      expect(forRun.map((s) => [s.integrationId, s.name]).sort()).toEqual([['crm', 'OWN'], [null, 'SHARED']].sort());
    });

    it('page through every secret in order, and reseal one only while it holds the value expected', async () => {
      const { store, clock } = subject;
      const refs = [
        { botId: 'bot-a', integrationId: null, name: 'B' },
        { botId: 'bot-a', integrationId: 'crm', name: 'A' },
        { botId: 'bot-a', integrationId: null, name: 'A' },
        { botId: 'bot-b', integrationId: null, name: 'A' },
      ];
      for (const ref of refs) await store.secrets.put(ref, `old-${ref.botId}-${ref.integrationId}-${ref.name}`, clock.now(), 10);
      const seen: string[] = [];
      let after: SecretRef | null = null;
      for (;;) {
        const page = await store.secrets.page(after, 3);
        if (page.length === 0) break;
        seen.push(...page.map((s) => `${s.botId}/${s.integrationId ?? ''}/${s.name}`));
        const last = page[page.length - 1];
        after = { botId: last.botId, integrationId: last.integrationId, name: last.name };
      }
      expect(seen).toEqual(['bot-a//A', 'bot-a//B', 'bot-a/crm/A', 'bot-b//A']);
      const ref = refs[1];
      expect(await store.secrets.reseal(ref, 'not-what-it-holds', 'new')).toBe(false);
      expect(await store.secrets.reseal(ref, 'old-bot-a-crm-A', 'new')).toBe(true);
      expect((await store.secrets.list(ref)).map((s) => s.sealed)).toEqual(['new']);
    });
  });
}
