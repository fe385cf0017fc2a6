import { createHmac, randomBytes, webcrypto } from 'node:crypto';
import { SandboxError, type HostRun } from './host-module';

/** Different keys one run may hold (importing the same key again makes none); one more ends the run. */
export const MAX_KEYS = 1000;

/** What the sandbox learns of a key: the id it names it by, and the attributes the standard shows (`CryptoKey`). */
export interface KeyInfo {
  id: string;
  type: string;
  extractable: boolean;
  /** The KeyAlgorithm dictionary; `publicExponent` as an array of bytes. */
  algorithm: Record<string, unknown>;
  usages: string[];
}

/**
 * The crypto keys of one run, held on the host; the sandbox names them by id. An id is random, or for
 * an imported key an HMAC of everything the import was given under a secret of the run, so a
 * connector that imports the same key on every call holds one key. The ring is the run's own
 * (`HostRun.local`) and dropped with it: an id means nothing to any other run.
 */
export class KeyRing {
  private readonly keys = new Map<string, webcrypto.CryptoKey>();
  private readonly secret = randomBytes(32);

  private constructor(private readonly run: HostRun) {}

  static of(run: HostRun): KeyRing {
    return run.local('crypto.keys', () => new KeyRing(run));
  }

  /** The key a CryptoKey of this run names. */
  get(id: unknown): webcrypto.CryptoKey {
    const key = typeof id === 'string' ? this.keys.get(id) : undefined;
    if (!key) throw new SandboxError('TypeError', 'The key is not a CryptoKey of this run.');
    return key;
  }

  /** The id an import of these inputs gets: the same inputs, the same key. */
  importId(...inputs: Array<string | Uint8Array>): string {
    const mac = createHmac('sha256', this.secret);
    for (const input of inputs) mac.update(`${input.length}:`).update(input);
    return `i.${mac.digest('base64url')}`;
  }

  /** The key with this id, if the run holds one. */
  find(id: string): KeyInfo | null {
    const key = this.keys.get(id);
    return key ? describe(id, key) : null;
  }

  add(key: webcrypto.CryptoKey, id = `k.${randomBytes(16).toString('base64url')}`): KeyInfo {
    if (!this.keys.has(id)) {
      if (this.keys.size >= MAX_KEYS) this.run.exceeded(`The connector made more than ${MAX_KEYS} different crypto keys in one run; make a key once and use it again.`);
      this.keys.set(id, key);
    }
    return describe(id, key);
  }
}

function describe(id: string, key: webcrypto.CryptoKey): KeyInfo {
  const algorithm: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(key.algorithm)) {
    if (value instanceof Uint8Array) algorithm[name] = [...value];
    else if (value !== null && typeof value === 'object') algorithm[name] = { name: (value as { name: unknown }).name };
    else algorithm[name] = value;
  }
  return { id, type: key.type, extractable: key.extractable, algorithm, usages: [...key.usages] };
}
