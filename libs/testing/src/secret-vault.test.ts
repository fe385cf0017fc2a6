import { randomBytes } from 'node:crypto';
import { RUN_SECRETS_REUSE_MS, SecretCipher, SecretVault } from '@gi/auth';
import { createFakeStore } from './fake-store';
import { ManualClock } from './manual-clock';

const key = () => randomBytes(32);
const ref = { botId: 'acme', integrationId: 'crm', name: 'API_KEY' };

describe('SecretVault', () => {
  const clock = new ManualClock(1_000);

  it('gives a run the bot\'s secrets with the integration\'s over them, frozen', async () => {
    const store = createFakeStore(clock);
    const vault = new SecretVault(store.secrets, new SecretCipher(key()));
    await vault.set({ botId: 'acme', integrationId: null, name: 'TOKEN' }, 'bot-value', clock.now());
    await vault.set({ botId: 'acme', integrationId: null, name: 'SHARED' }, 'shared', clock.now());
    await vault.set({ botId: 'acme', integrationId: 'crm', name: 'TOKEN' }, 'crm-value', clock.now());
    const secrets = await vault.forRun('acme', 'crm');
    expect(secrets).toEqual({ TOKEN: 'crm-value', SHARED: 'shared' });
    expect(Object.isFrozen(secrets)).toBe(true);
    expect(await vault.forRun('acme', 'erp')).toEqual({ TOKEN: 'bot-value', SHARED: 'shared' });
    expect(await vault.list({ botId: 'acme', integrationId: 'crm' })).toEqual([{ name: 'TOKEN', createdAt: 1_000, updatedAt: 1_000 }]);
  });

  it('without a key refuses writes (409) and runs with secrets, but not runs without', async () => {
    const store = createFakeStore(clock);
    const vault = new SecretVault(store.secrets, null);
    await expect(vault.set(ref, 'v', clock.now())).rejects.toMatchObject({ code: 'secrets_not_configured' });
    jest.useFakeTimers();
    try {
      expect(await vault.forRun('acme', 'crm')).toEqual({});
      // Set elsewhere (the control service): seen once the runs' reuse of what they read is over.
      await new SecretVault(store.secrets, new SecretCipher(key())).set(ref, 'v', clock.now());
      jest.advanceTimersByTime(RUN_SECRETS_REUSE_MS);
      await expect(vault.forRun('acme', 'crm')).rejects.toThrow(/no SECRETS_KEY is configured/);
    } finally {
      jest.useRealTimers();
    }
  });

  it('reads a run\'s secrets from the store at most once a second per integration, and at once after a change made through it', async () => {
    const store = createFakeStore(clock);
    let reads = 0;
    const listForRun = store.secrets.listForRun.bind(store.secrets);
    store.secrets.listForRun = (botId, integrationId) => {
      reads++;
      return listForRun(botId, integrationId);
    };
    const vault = new SecretVault(store.secrets, new SecretCipher(key()));
    jest.useFakeTimers();
    try {
      for (let i = 0; i < 5; i++) expect(await vault.forRun('acme', 'crm')).toEqual({});
      await vault.forRun('acme', 'erp');
      expect(reads).toBe(2);
      await vault.set(ref, 'first', clock.now());
      expect(await vault.forRun('acme', 'crm')).toEqual({ API_KEY: 'first' });
      await vault.delete(ref);
      expect(await vault.forRun('acme', 'crm')).toEqual({});
      expect(reads).toBe(4);
      jest.advanceTimersByTime(RUN_SECRETS_REUSE_MS);
      await vault.forRun('acme', 'crm');
      expect(reads).toBe(5);
    } finally {
      jest.useRealTimers();
    }
  });

  it('refuses a new name in a full scope with a 400 naming the limit', async () => {
    const store = createFakeStore(clock);
    const vault = new SecretVault(store.secrets, new SecretCipher(key()));
    for (let i = 0; i < 100; i++) await vault.set({ ...ref, name: `S${i}` }, 'v', clock.now());
    await expect(vault.set({ ...ref, name: 'ONE_MORE' }, 'v', clock.now())).rejects.toMatchObject({ code: 'bad_request', detail: expect.stringContaining('100 secrets') });
    await expect(vault.set({ ...ref, name: 'S1' }, 'rotated', clock.now())).resolves.toBe('updated');
  });

  it('re-encrypts every value under the current key after a rotation', async () => {
    const store = createFakeStore(clock);
    const old = key();
    const before = new SecretVault(store.secrets, new SecretCipher(old));
    for (let i = 0; i < 250; i++) await before.set({ botId: `bot${i % 3}`, integrationId: i % 2 ? 'crm' : null, name: `S${i}` }, `value-${i}`, clock.now());
    const newKey = key();
    const current = new SecretCipher(newKey, old);
    const after = new SecretVault(store.secrets, current);
    expect(await after.resealAll(clock.now())).toEqual({ resealed: 250, current: 0, unreadable: 0 });
    expect(await after.resealAll(clock.now())).toEqual({ resealed: 0, current: 250, unreadable: 0 });
    expect([...store.secrets.records.values()].every((s) => current.isCurrent(s.sealed))).toBe(true);
    // The previous key is no longer needed: every value opens under the current one alone.
    const currentKeyOnly = new SecretVault(store.secrets, new SecretCipher(newKey));
    expect((await currentKeyOnly.forRun('bot1', 'crm')).S1).toBe('value-1');
  });

  it('seals callback signing secrets for their bot, opens those stored in clear as they are, and re-encrypts them', async () => {
    const store = createFakeStore(clock);
    const old = key();
    const before = new SecretVault(store.secrets, new SecretCipher(old), store.catalog);
    const sealed = before.sealSigningSecret('acme', 'whsec_abc');
    expect(sealed).toMatch(/^gi1:/);
    expect(before.openSigningSecret('acme', sealed)).toBe('whsec_abc');
    expect(() => before.openSigningSecret('other-bot', sealed)).toThrow(/not sealed for this bot/);
    expect(before.openSigningSecret('acme', 'whsec_in_clear')).toBe('whsec_in_clear');
    expect(() => new SecretVault(store.secrets, null).openSigningSecret('acme', sealed)).toThrow(/no SECRETS_KEY is configured/);
    // Without a key, new ones are stored in clear, as before secrets existed.
    expect(new SecretVault(store.secrets, null).sealSigningSecret('acme', 'whsec_abc')).toBe('whsec_abc');

    await store.catalog.rotateSigningSecret('acme', { secret: sealed, createdAt: clock.now(), expiresAt: null }, clock.now());
    await store.catalog.rotateSigningSecret('legacy', { secret: 'whsec_legacy', createdAt: clock.now(), expiresAt: null }, clock.now());
    const newKey = key();
    const after = new SecretVault(store.secrets, new SecretCipher(newKey, old), store.catalog);
    expect(await after.resealAll(clock.now())).toEqual({ resealed: 2, current: 0, unreadable: 0 });
    const only = new SecretVault(store.secrets, new SecretCipher(newKey), store.catalog);
    const [acme] = await store.catalog.getSigningSecrets('acme', clock.now());
    const [legacy] = await store.catalog.getSigningSecrets('legacy', clock.now());
    expect([only.openSigningSecret('acme', acme.secret), only.openSigningSecret('legacy', legacy.secret)]).toEqual(['whsec_abc', 'whsec_legacy']);
  });
});
