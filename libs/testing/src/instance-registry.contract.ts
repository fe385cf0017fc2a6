import type { StoreUnderTest } from './store-under-test';

/** The registry of running service instances. Part of the store contract (store.contract.ts). */
export function describeInstanceRegistryContract(current: () => StoreUnderTest): void {
  let subject: StoreUnderTest;
  beforeEach(() => {
    subject = current();
  });

  describe('instances', () => {
    it('count the live instances of a role; one that left or went quiet no longer counts', async () => {
      const { store, clock } = subject;
      const ttl = 6000;
      expect(await store.instances.heartbeat('gateway', 'g1', clock.now(), ttl)).toBe(1);
      expect(await store.instances.heartbeat('gateway', 'g2', clock.now(), ttl)).toBe(2);
      expect(await store.instances.heartbeat('gateway', 'g1', clock.now(), ttl)).toBe(2);
      expect(await store.instances.heartbeat('other-role', 'x', clock.now(), ttl)).toBe(1);
      clock.advance(ttl + 1);
      expect(await store.instances.heartbeat('gateway', 'g1', clock.now(), ttl)).toBe(1);
      expect(await store.instances.heartbeat('gateway', 'g2', clock.now(), ttl)).toBe(2);
      await store.instances.leave('gateway', 'g2');
      expect(await store.instances.heartbeat('gateway', 'g1', clock.now(), ttl)).toBe(1);
    });
  });
}
