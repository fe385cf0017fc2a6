import type { StoreUnderTest } from './store-under-test';

/** Bot tokens. Part of the store contract (store.contract.ts). */
export function describeTokenStoreContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('tokens', () => {
    it('registers, lists and revokes tokens per bot', async () => {
      const { store, clock } = subject;
      const record = { botId: 'bot-a', tokenId: 't1', label: 'crm', createdAt: clock.now(), expiresAt: null, revokedAt: null };
      await store.tokens.create(record);
      expect(await store.tokens.get('bot-a', 't1')).toEqual(record);
      expect(await store.tokens.get('bot-b', 't1')).toBeNull();
      expect(await store.tokens.revoke('bot-b', 't1', clock.now())).toBe(false);
      expect(await store.tokens.revoke('bot-a', 't1', clock.now())).toBe(true);
      expect((await store.tokens.get('bot-a', 't1'))?.revokedAt).toBe(clock.now());
      expect(await store.tokens.list('bot-a')).toHaveLength(1);
    });
  });
}
