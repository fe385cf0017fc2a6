import type { webcrypto } from 'node:crypto';
import { KiB, MiB, formatBytes } from '../sandbox-options';
import { SandboxError } from './host-module';
import type { KeyRing } from './crypto-keys';

/**
 * What one crypto call may ask of the host, so that the work of a call stays short (a few hundred
 * milliseconds at worst) and the host holds little for a run. The time the work takes also counts
 * as the run's CPU time.
 */
export const CRYPTO_LIMITS = {
  /** Bytes of data (and IVs, salts, labels...) one call may pass. */
  dataBytes: 8 * MiB,
  /** Bytes of one key to import or unwrap (a JWK as JSON text); an 8192-bit RSA private key is about 6 KiB. */
  keyDataBytes: 16 * KiB,
  /** Largest RSA key `generateKey` makes (a 4096-bit key takes 0.5 to 2 s), and the largest imported. */
  rsaGenerateBits: 4096,
  rsaImportBits: 8192,
  /** PBKDF2: iterations times output blocks (one per hash output size); 2,000,000 takes about 0.4 to 1 s. */
  pbkdf2Work: 2_000_000,
} as const;

/** The algorithms the host runs (WebCrypto names, matched without regard to case): the same on every Node version. */
const ALGORITHMS = new Map(
  ['SHA-1', 'SHA-256', 'SHA-384', 'SHA-512', 'HMAC', 'RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP', 'ECDSA', 'ECDH', 'AES-GCM', 'AES-CBC', 'AES-CTR', 'AES-KW', 'HKDF', 'PBKDF2', 'Ed25519', 'X25519'].map((name) => [
    name.toUpperCase(),
    name,
  ]),
);
const HASH_BITS: Record<string, number> = { 'SHA-1': 160, 'SHA-256': 256, 'SHA-384': 384, 'SHA-512': 512 };

/**
 * The members of algorithm dictionaries and their types, as the sandbox sends them: strings,
 * numbers (non-finite ones as strings), `hash` as a name or `{name}`, bytes as `{$bytes: n}` (the
 * n-th extra argument of the call), keys as `{$key: id}`, and null for a value of the wrong type.
 */
const MEMBERS = {
  name: 'string',
  hash: 'hash',
  length: 'number',
  iv: 'bytes',
  additionalData: 'bytes',
  tagLength: 'number',
  counter: 'bytes',
  namedCurve: 'string',
  modulusLength: 'number',
  publicExponent: 'bytes',
  saltLength: 'number',
  label: 'bytes',
  salt: 'bytes',
  info: 'bytes',
  iterations: 'number',
  public: 'key',
} as const;

/** An algorithm dictionary as Node's WebCrypto takes it. */
export type Algorithm = Record<string, unknown> & { name?: string };

const isRecord = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** The algorithm dictionary a connector passed, rebuilt from what the sandbox sent; unknown algorithms are refused. */
export function algorithmFrom(wire: unknown, extras: readonly unknown[], ring: KeyRing): Algorithm {
  if (!isRecord(wire)) throw new SandboxError('TypeError', 'The algorithm must be an object or a string.');
  const algorithm: Algorithm = {};
  for (const [member, type] of Object.entries(MEMBERS)) {
    if (!Object.hasOwn(wire, member)) continue;
    const value = memberOf(type, wire[member], extras, ring);
    if (value !== undefined) algorithm[member] = value;
  }
  if (typeof algorithm.name === 'string') algorithm.name = known(algorithm.name);
  const hash = algorithm.hash as string | { name?: string } | undefined;
  if (hash !== undefined) {
    const name = typeof hash === 'string' ? hash : hash.name;
    if (typeof name === 'string' && !(known(name) in HASH_BITS)) throw notSupported();
  }
  return algorithm;
}

function memberOf(type: (typeof MEMBERS)[keyof typeof MEMBERS], value: unknown, extras: readonly unknown[], ring: KeyRing): unknown {
  if (value === null && (type === 'bytes' || type === 'key')) return null;
  switch (type) {
    case 'string':
      return typeof value === 'string' ? value : undefined;
    case 'number':
      return typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : undefined;
    case 'hash':
      if (typeof value === 'string') return value;
      return isRecord(value) ? (typeof value.name === 'string' ? { name: value.name } : {}) : undefined;
    case 'bytes': {
      const index = isRecord(value) ? value.$bytes : undefined;
      const bytes = typeof index === 'number' ? extras[index] : undefined;
      return bytes instanceof Uint8Array ? bytes : undefined;
    }
    case 'key':
      return isRecord(value) ? ring.get(value.$key) : undefined;
  }
}

/** The standard spelling of an algorithm name, or NotSupportedError. */
function known(name: string): string {
  const standard = ALGORITHMS.get(name.toUpperCase());
  if (!standard) throw notSupported();
  return standard;
}

const notSupported = () => new SandboxError('DOMException', 'Unrecognized algorithm name', 'NotSupportedError');

/** A refusal of one of the limits above. */
export const overLimit = (message: string) => new SandboxError('DOMException', message, 'QuotaExceededError');

/** Bytes a connector passed: a Uint8Array from an ArrayBuffer of the sandbox. */
export function bytesArgument(value: unknown, what: string): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new SandboxError('TypeError', `The ${what} must be an ArrayBuffer, a TypedArray or a DataView.`);
  return value;
}

/** Refuses a call whose bytes together pass the data limit. */
export function checkDataSize(method: string, ...values: readonly unknown[]): void {
  let bytes = 0;
  for (const value of values) if (value instanceof Uint8Array) bytes += value.byteLength;
  if (bytes > CRYPTO_LIMITS.dataBytes) {
    throw overLimit(`crypto.subtle.${method} takes at most ${formatBytes(CRYPTO_LIMITS.dataBytes)} of data per call (${bytes} bytes given).`);
  }
}

/** Refuses key data (bytes, or a JWK's JSON text) larger than a key can be. */
export function checkKeyDataSize(bytes: number): void {
  if (bytes > CRYPTO_LIMITS.keyDataBytes) throw overLimit(`Key data is limited to ${formatBytes(CRYPTO_LIMITS.keyDataBytes)} (${bytes} bytes given).`);
}

/** Refuses a wrapped key larger than key data and its wrapping (a block of padding, or an RSA modulus) can be. */
export function checkWrappedKeySize(bytes: number): void {
  const most = CRYPTO_LIMITS.keyDataBytes + KiB;
  if (bytes > most) throw overLimit(`A wrapped key is limited to ${formatBytes(most)} (${bytes} bytes given).`);
}

/** Refuses key generation that would take too long or make too large a key. */
export function checkGenerate(algorithm: Algorithm): void {
  const { name, modulusLength, publicExponent, length } = algorithm;
  if (name?.startsWith('RSA') && typeof modulusLength === 'number' && modulusLength > CRYPTO_LIMITS.rsaGenerateBits) {
    throw overLimit(`RSA keys of more than ${CRYPTO_LIMITS.rsaGenerateBits} bits are not generated here (modulusLength ${modulusLength}).`);
  }
  if (publicExponent instanceof Uint8Array && publicExponent.byteLength > 4) throw overLimit('An RSA publicExponent of more than 4 bytes is not supported.');
  if (name === 'HMAC') checkHmacLength(length);
}

const KEY_FORMATS = ['raw', 'spki', 'pkcs8', 'jwk'];

/**
 * Refuses to export a key in a format its algorithm has none of (NotSupportedError, as the standard
 * says; Node 20 says InvalidAccessError), a key that is not extractable, or a private elliptic-curve key
 * as raw (InvalidAccessError), whatever the host's Node says.
 */
export function checkExport(key: webcrypto.CryptoKey, format: unknown): void {
  const { name } = key.algorithm;
  const formats = /^(AES|HMAC)/.test(name) ? ['raw', 'jwk'] : name.startsWith('RSA') ? ['spki', 'pkcs8', 'jwk'] : /^(EC|Ed|X)/.test(name) ? KEY_FORMATS : [];
  if (formats.length === 0 || (KEY_FORMATS.includes(format as string) && !formats.includes(format as string))) {
    throw new SandboxError('DOMException', `${name} keys cannot be exported${formats.length ? ` as ${String(format)}` : ''}.`, 'NotSupportedError');
  }
  if (!key.extractable) throw new SandboxError('DOMException', 'The key is not extractable.', 'InvalidAccessError');
  // Elliptic-curve keys are exported raw only as public keys; the standard says InvalidAccessError for a
  // private one (Node 24 says NotSupportedError).
  if (format === 'raw' && /^(EC|Ed|X)/.test(name) && key.type !== 'public') {
    throw new SandboxError('DOMException', `Only public ${name} keys can be exported as raw.`, 'InvalidAccessError');
  }
}

/** Refuses an imported or unwrapped RSA key larger than the import limit. */
export function checkKeySize(key: webcrypto.CryptoKey): void {
  const bits = (key.algorithm as { modulusLength?: unknown }).modulusLength;
  if (typeof bits === 'number' && bits > CRYPTO_LIMITS.rsaImportBits) throw overLimit(`RSA keys of more than ${CRYPTO_LIMITS.rsaImportBits} bits are not supported (this one has ${bits}).`);
}

/** Refuses a derivation that would take too long: `length` bits from `algorithm`. */
export function checkDerive(algorithm: Algorithm, length: unknown): void {
  if (algorithm.name !== 'PBKDF2' || typeof length !== 'number' || typeof algorithm.iterations !== 'number') return;
  const hash = algorithm.hash as string | { name?: string } | undefined;
  const hashName = typeof hash === 'string' ? hash : hash?.name;
  const hashBits = HASH_BITS[ALGORITHMS.get(String(hashName).toUpperCase()) ?? ''];
  if (!hashBits) return; // no hash: Node refuses the call
  const work = algorithm.iterations * Math.max(1, Math.ceil(length / hashBits));
  if (work > CRYPTO_LIMITS.pbkdf2Work) {
    throw overLimit(`PBKDF2 is limited to ${CRYPTO_LIMITS.pbkdf2Work.toLocaleString('en-US')} iterations times blocks of output per call (${algorithm.iterations} iterations for ${length} bits of ${String(hashName)} asked).`);
  }
}

/** The length in bits of the key `deriveKey` makes for `derivedKeyType` (AES: its length; HMAC: its length or the hash's block size). */
export function derivedKeyBits(derivedKeyType: Algorithm): number | undefined {
  const { name, length, hash } = derivedKeyType;
  if (name === 'HMAC') {
    checkHmacLength(length);
    if (typeof length === 'number') return length;
    const hashName = typeof hash === 'string' ? hash : (hash as { name?: string } | undefined)?.name;
    return ['SHA-384', 'SHA-512'].includes(ALGORITHMS.get(String(hashName).toUpperCase()) ?? '') ? 1024 : 512;
  }
  return typeof length === 'number' ? length : undefined;
}

function checkHmacLength(length: unknown): void {
  if (typeof length === 'number' && length > CRYPTO_LIMITS.keyDataBytes * 8) throw overLimit(`HMAC keys are limited to ${CRYPTO_LIMITS.keyDataBytes * 8} bits (length ${length}).`);
}
