import { randomFillSync, randomUUID, webcrypto } from 'node:crypto';
import {
  algorithmFrom,
  bytesArgument,
  checkDataSize,
  checkDerive,
  checkExport,
  checkGenerate,
  checkKeyDataSize,
  checkKeySize,
  checkWrappedKeySize,
  derivedKeyBits,
  overLimit,
} from './crypto-algorithm';
import { KeyRing, type KeyInfo } from './crypto-keys';
import type { KeyGenerator } from '../run/run-input';
import { RunLimitExceeded, SandboxError, type GlobalsModule, type HostRun } from './host-module';

/** The most bytes `crypto.getRandomValues` fills in one call (the standard's limit). */
export const MAX_RANDOM_BYTES = 65_536;

const { subtle } = webcrypto;
type Key = webcrypto.CryptoKey;
type Format = Parameters<typeof subtle.exportKey>[0];

/**
 * Makes keys on the calling thread. Only for a thread that is never stopped while it makes one: Node
 * aborts the whole process when a worker thread is terminated as a key generation it started
 * completes (KeyGenJob::ToResult, every Node version here). A sandbox worker thread has its keys made
 * by the pool's thread instead (`RunInput.generateKey`).
 */
export const generateKeyHere: KeyGenerator = (algorithm, extractable, usages) =>
  subtle.generateKey(algorithm as never, extractable, usages) as Promise<Key | webcrypto.CryptoKeyPair>;

/**
 * `crypto` and `crypto.subtle`: Node's WebCrypto does the work, off the engine's thread (a promise in
 * the sandbox, counted as a call in flight), and the time it takes counts as the run's CPU time.
 * Keys stay here, in the run's `KeyRing`. Every argument is checked: a connector can pass anything.
 */
export const cryptoModule: GlobalsModule = {
  name: 'crypto',
  globals: ['crypto', 'Crypto', 'SubtleCrypto', 'CryptoKey'],
  functions: {
    random(_run, length) {
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 0) throw new SandboxError('TypeError', 'A byte length is expected.');
      if (length > MAX_RANDOM_BYTES) throw overLimit(`getRandomValues fills at most ${MAX_RANDOM_BYTES} bytes per call (${length} asked).`);
      return randomFillSync(new Uint8Array(length));
    },
    randomUUID: () => randomUUID(),

    digest: (run, algorithm, data, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('digest', data, ...extras);
        return bytes(await subtle.digest(algorithmFrom(algorithm, extras, ring) as never, bytesArgument(data, 'data')));
      }),
    encrypt: (run, algorithm, key, data, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('encrypt', data, ...extras);
        return bytes(await subtle.encrypt(algorithmFrom(algorithm, extras, ring) as never, ring.get(key), bytesArgument(data, 'data')));
      }),
    decrypt: (run, algorithm, key, data, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('decrypt', data, ...extras);
        return bytes(await subtle.decrypt(algorithmFrom(algorithm, extras, ring) as never, ring.get(key), bytesArgument(data, 'data')));
      }),
    sign: (run, algorithm, key, data, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('sign', data, ...extras);
        return bytes(await subtle.sign(algorithmFrom(algorithm, extras, ring) as never, ring.get(key), bytesArgument(data, 'data')));
      }),
    verify: (run, algorithm, key, signature, data, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('verify', signature, data, ...extras);
        return subtle.verify(algorithmFrom(algorithm, extras, ring) as never, ring.get(key), bytesArgument(signature, 'signature'), bytesArgument(data, 'data'));
      }),

    generateKey: (run, algorithm, extractable, usages, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('generateKey', ...extras);
        const normalized = algorithmFrom(algorithm, extras, ring);
        checkGenerate(normalized);
        const made = await (run.input.generateKey ?? generateKeyHere)(normalized, flag(extractable), usagesOf(usages));
        return keysText('privateKey' in made ? { publicKey: ring.add(made.publicKey), privateKey: ring.add(made.privateKey) } : ring.add(made));
      }),
    importKey: (run, format, keyData, algorithm, extractable, usages, ...extras) =>
      work(run, async (ring) => {
        const data = keyData instanceof Uint8Array ? keyData : jwkOf(keyData);
        checkKeyDataSize(data instanceof Uint8Array ? data.byteLength : Buffer.byteLength(JSON.stringify(data)));
        checkDataSize('importKey', ...extras);
        const normalized = algorithmFrom(algorithm, extras, ring);
        const id = ring.importId(String(format), data instanceof Uint8Array ? data : JSON.stringify(data), JSON.stringify([algorithm, extractable, usages]), ...extras.filter(isBytes));
        const known = ring.find(id);
        if (known) return keysText(known);
        const key = await subtle.importKey(formatOf(format), data as never, normalized as never, flag(extractable), usagesOf(usages));
        checkKeySize(key);
        return keysText(ring.add(key, id));
      }),
    exportKey: (run, format, key) =>
      work(run, async (ring) => {
        const exportable = ring.get(key);
        checkExport(exportable, format);
        const exported = await subtle.exportKey(formatOf(format), exportable);
        return exported instanceof ArrayBuffer ? bytes(exported) : exported;
      }),

    deriveBits: (run, algorithm, baseKey, length, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('deriveBits', ...extras);
        const normalized = algorithmFrom(algorithm, extras, ring);
        if (length !== null && typeof length !== 'number' && typeof length !== 'string') throw new SandboxError('TypeError', 'The length must be a number of bits or null.');
        const bits = length === null ? null : unsignedLong(typeof length === 'string' ? Number(length) : length);
        checkDerive(normalized, bits);
        return bytes(await subtle.deriveBits(normalized as never, ring.get(baseKey), bits as number));
      }),
    deriveKey: (run, algorithm, baseKey, derivedKeyType, extractable, usages, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('deriveKey', ...extras);
        const normalized = algorithmFrom(algorithm, extras, ring);
        const derived = algorithmFrom(derivedKeyType, extras, ring);
        checkDerive(normalized, derivedKeyBits(derived));
        return keysText(ring.add(await subtle.deriveKey(normalized as never, ring.get(baseKey), derived as never, flag(extractable), usagesOf(usages))));
      }),

    wrapKey: (run, format, key, wrappingKey, wrapAlgorithm, ...extras) =>
      work(run, async (ring) => {
        checkDataSize('wrapKey', ...extras);
        const algorithm = algorithmFrom(wrapAlgorithm, extras, ring);
        const wrapped = ring.get(key);
        checkExport(wrapped, format);
        return bytes(await subtle.wrapKey(formatOf(format), wrapped, ring.get(wrappingKey), algorithm as never));
      }),
    unwrapKey: (run, format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, usages, ...extras) =>
      work(run, async (ring) => {
        checkWrappedKeySize(bytesArgument(wrappedKey, 'wrapped key').byteLength);
        checkDataSize('unwrapKey', ...extras);
        const algorithm = algorithmFrom(unwrapAlgorithm, extras, ring);
        const keyAlgorithm = algorithmFrom(unwrappedKeyAlgorithm, extras, ring);
        const key = await subtle.unwrapKey(formatOf(format), wrappedKey as Uint8Array, ring.get(unwrappingKey), algorithm as never, keyAlgorithm as never, flag(extractable), usagesOf(usages));
        checkKeySize(key);
        return keysText(ring.add(key));
      }),
  },
};

/**
 * Runs the work of one `crypto.subtle` call for `run`: its time (from the call to its end, on Node's
 * thread pool) counts as CPU time of the run, and its errors become those the standard names.
 */
async function work<T>(run: HostRun, task: (ring: KeyRing) => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await task(KeyRing.of(run));
  } catch (error) {
    throw standardError(error);
  } finally {
    run.spendCpu(performance.now() - started);
  }
}

const EXCEPTION_NAMES = new Set(['NotSupportedError', 'InvalidAccessError', 'DataError', 'OperationError', 'SyntaxError', 'QuotaExceededError', 'TypeMismatchError', 'InvalidStateError']);

/** Node's error as the connector sees it: a DOMException by name, a TypeError, or an OperationError. */
function standardError(error: unknown): Error {
  if (error instanceof SandboxError || error instanceof RunLimitExceeded) return error;
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message.slice(0, 500) : '';
  // Node 20 names this one InvalidAccessException.
  const exception = name === 'InvalidAccessException' ? 'InvalidAccessError' : name;
  if (typeof exception === 'string' && EXCEPTION_NAMES.has(exception)) return new SandboxError('DOMException', text, exception);
  if (name === 'TypeError' || name === 'RangeError') return new SandboxError(name, text);
  return new SandboxError('DOMException', 'The operation failed for an operation-specific reason.', 'OperationError');
}

const bytes = (buffer: ArrayBuffer) => new Uint8Array(buffer);
const isBytes = (value: unknown): value is Uint8Array => value instanceof Uint8Array;

/**
 * Keys made for the sandbox, as JSON text: a promise settled with an object would hand it to any
 * `then` the connector put on Object.prototype, and with it the key's id.
 */
const keysText = (keys: KeyInfo | { publicKey: KeyInfo; privateKey: KeyInfo }) => JSON.stringify(keys);

/** The sandbox converts booleans as WebIDL does; anything but `true` here is false. */
const flag = (value: unknown) => value === true;

function usagesOf(value: unknown): webcrypto.KeyUsage[] {
  if (!Array.isArray(value) || !value.every((usage) => typeof usage === 'string')) throw new SandboxError('TypeError', 'The key usages must be a sequence of strings.');
  return value as webcrypto.KeyUsage[];
}

function formatOf(value: unknown): Format {
  if (typeof value !== 'string') throw new SandboxError('TypeError', 'The key format must be a string.');
  return value as Format;
}

/** A JsonWebKey as the sandbox sends it: an object of strings, `ext`, `key_ops` and `oth`. */
function jwkOf(value: unknown): webcrypto.JsonWebKey {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new SandboxError('TypeError', 'The key data of a "jwk" import must be a JsonWebKey object.');
  return value as webcrypto.JsonWebKey;
}

/** WebIDL's `unsigned long` of a number: NaN and the infinities are 0, the rest truncated modulo 2^32 (Node 24 refuses what it should convert). */
function unsignedLong(value: number): number {
  if (!Number.isFinite(value)) return 0;
  const truncated = Math.trunc(value) % 2 ** 32;
  return truncated < 0 ? truncated + 2 ** 32 : truncated;
}
