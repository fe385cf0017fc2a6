import { describeBotDeletionContract } from './bot-deletion.contract';
import { describeCatalogStoreContract } from './catalog-store.contract';
import { describeIdempotencyKeysContract } from './idempotency-keys.contract';
import { describeInstanceRegistryContract } from './instance-registry.contract';
import { describeInvocationStoreContract } from './invocation-store.contract';
import { describeJournalContract } from './journal.contract';
import { describeSecretStoreContract } from './secret-store.contract';
import type { StoreUnderTest } from './store-under-test';
import { describeTokenStoreContract } from './token-store.contract';

/**
 * The behaviour every Store adapter must show (SQLite, MongoDB). Run it with the adapter's factory.
 */
export function describeStoreContract(name: string, open: () => Promise<StoreUnderTest>): void {
  describe(`Store contract: ${name}`, () => {
    let subject: StoreUnderTest;
    beforeEach(async () => {
      subject = await open();
    });
    afterEach(async () => {
      await subject.dispose();
    });

    describeInvocationStoreContract(() => subject);
    describeJournalContract(() => subject);
    describeIdempotencyKeysContract(() => subject);
    describeCatalogStoreContract(() => subject);
    describeBotDeletionContract(() => subject);
    describeSecretStoreContract(() => subject);
    describeInstanceRegistryContract(() => subject);
    describeTokenStoreContract(() => subject);

    it('answers ping', async () => {
      expect(await subject.store.ping()).toBe(true);
    });
  });
}
