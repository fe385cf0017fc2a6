import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { SECRET_KEY_BYTES as KEY_BYTES } from '@gi/domain';
import type { SecretRef } from '@gi/domain';

/** Sealed values start with this; a later format gets another. */
const FORMAT = 'gi1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that cannot be opened: sealed under a key not configured, or not for this bot, scope and name (or altered). */
export class SecretUnreadable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretUnreadable';
  }
}

/** A key's public name, stored with each value it sealed: a hash of it, which tells nothing about it. */
export function secretKeyId(key: Buffer): string {
  return createHash('sha256').update('gi-secrets-key-id\u0000').update(key).digest('hex').slice(0, 16);
}

/**
 * The associated data of a sealed value: its bot, scope and name. A sealed value copied to another
 * row (another bot, integration or name) fails to open.
 */
const associatedData = ({ botId, integrationId, name }: SecretRef) => Buffer.from(JSON.stringify(['gi-secret', botId, integrationId, name]), 'utf8');

/**
 * Seals connector secrets with AES-256-GCM under the current key, and opens values sealed under the
 * current key or the previous one (during a key rotation). A sealed value reads
 * `gi1:<keyId>:<iv>:<ciphertext>:<tag>` (base64url), so re-encryption knows which values still need it.
 */
export class SecretCipher {
  readonly keyId: string;
  private readonly keys: Map<string, Buffer>;

  constructor(current: Buffer, previous: Buffer | null = null) {
    if (current.length !== KEY_BYTES || (previous && previous.length !== KEY_BYTES)) throw new Error(`A secrets key is ${KEY_BYTES} bytes.`);
    this.keyId = secretKeyId(current);
    this.keys = new Map([[this.keyId, current]]);
    if (previous) this.keys.set(secretKeyId(previous), previous);
  }

  seal(ref: SecretRef, value: string): string {
    const key = this.keys.get(this.keyId) as Buffer;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(ref));
    const ciphertext = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return [FORMAT, this.keyId, iv.toString('base64url'), ciphertext.toString('base64url'), cipher.getAuthTag().toString('base64url')].join(':');
  }

  open(ref: SecretRef, sealed: string): string {
    const parts = sealed.split(':');
    if (parts.length !== 5 || parts[0] !== FORMAT) throw new SecretUnreadable(`Secret ${ref.name} is not in a sealed form this release reads.`);
    const [, keyId, iv, ciphertext, tag] = parts;
    const key = this.keys.get(keyId);
    if (!key) {
      throw new SecretUnreadable(`Secret ${ref.name} was sealed under key ${keyId}, which is neither SECRETS_KEY (${this.keyId}) nor SECRETS_KEY_PREVIOUS.`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(ref));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadable(`Secret ${ref.name} does not open: it was not sealed for this bot, scope and name, or it was altered.`);
    }
  }

  /** Whether a stored text is a sealed value (else it was stored in clear, before SECRETS_KEY was configured). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(`${FORMAT}:`);
  }

  /** Whether the value is sealed under the current key (else re-encryption seals it again). */
  isCurrent(sealed: string): boolean {
    return sealed.split(':', 2)[1] === this.keyId;
  }
}
