import { randomBytes } from 'node:crypto';
import { parseSecretKey } from '@gi/domain';
import { SecretCipher, secretKeyId, SecretUnreadable } from './secret-cipher';

const key = () => randomBytes(32);
const ref = { botId: 'acme', integrationId: 'crm', name: 'API_KEY' };

describe('SecretCipher', () => {
  it('opens what it sealed, and the sealed form shows neither the value nor the key', () => {
    const k = key();
    const cipher = new SecretCipher(k);
    const sealed = cipher.seal(ref, 'sk_live_123456');
    expect(cipher.open(ref, sealed)).toBe('sk_live_123456');
    expect(sealed).toMatch(new RegExp(`^gi1:${secretKeyId(k)}:`));
    expect(sealed).not.toContain('sk_live');
    expect(sealed).not.toContain(k.toString('base64url'));
    // A fresh IV each time: the same value never seals the same twice.
    expect(cipher.seal(ref, 'sk_live_123456')).not.toBe(sealed);
  });

  it('binds a sealed value to its bot, scope and name', () => {
    const cipher = new SecretCipher(key());
    const sealed = cipher.seal(ref, 'value');
    for (const other of [{ ...ref, botId: 'other' }, { ...ref, integrationId: null }, { ...ref, integrationId: 'erp' }, { ...ref, name: 'OTHER' }]) {
      expect(() => cipher.open(other, sealed)).toThrow(SecretUnreadable);
    }
  });

  it('refuses a value sealed under another key, naming the key ids but no key', () => {
    const sealed = new SecretCipher(key()).seal(ref, 'value');
    expect(() => new SecretCipher(key()).open(ref, sealed)).toThrow(/sealed under key [0-9a-f]{16}, which is neither SECRETS_KEY/);
  });

  it('refuses an altered value', () => {
    const cipher = new SecretCipher(key());
    const parts = cipher.seal(ref, 'value').split(':');
    parts[3] = Buffer.from('other').toString('base64url');
    expect(() => cipher.open(ref, parts.join(':'))).toThrow(/altered/);
  });

  it('during a key rotation opens values of the previous key and seals under the current one', () => {
    const old = key();
    const sealedBefore = new SecretCipher(old).seal(ref, 'value');
    const rotated = new SecretCipher(key(), old);
    expect(rotated.open(ref, sealedBefore)).toBe('value');
    expect(rotated.isCurrent(sealedBefore)).toBe(false);
    expect(rotated.isCurrent(rotated.seal(ref, 'value'))).toBe(true);
  });

  it('reads a key setting of 32 bytes in base64, and refuses anything else', () => {
    const k = key();
    expect(parseSecretKey(k.toString('base64')).equals(k)).toBe(true);
    expect(parseSecretKey(k.toString('base64url')).equals(k)).toBe(true);
    for (const bad of ['short', randomBytes(16).toString('base64'), randomBytes(33).toString('base64'), 'not base64 at all!!!!!!!!!!!!!!!!!!!!!!!!']) {
      expect(() => parseSecretKey(bad)).toThrow(/32 random bytes/);
    }
  });
});
