/**
 * `crypto`, `Crypto`, `SubtleCrypto` and `CryptoKey` (W3C Web Cryptography API) as in Workers and
 * browsers. The host does the work (Node's WebCrypto, at native speed) and keeps the keys: a
 * CryptoKey here holds the id the host names it by, which means something only to the run that made
 * it, and the attributes the standard shows. This side converts arguments as WebIDL does and copies
 * the bytes of BufferSources; the host checks all of it again.
 */
import type { Global } from './internal/global';
import { defineGlobal } from './internal/global';

/** What the host tells of a key it holds (libs/sandbox/src/host/crypto-keys.ts). */
interface KeyInfo {
  id: string;
  type: string;
  extractable: boolean;
  algorithm: Record<string, unknown>;
  usages: string[];
}

/** An algorithm dictionary or JWK as sent to the host: strings, numbers, `{$bytes: n}` for the n-th extra argument, `{$key: id}`. */
type Wire = Record<string, unknown>;
type Result<T> = Promise<T>;
/** A KeyInfo, or `{publicKey, privateKey}` of two, as JSON text (an object would meet a connector's Object.prototype.then on the way). */
type KeysText = string;

/** The host functions of this module (libs/sandbox/src/host/crypto.host.ts); `extras` are the bytes an algorithm names. */
interface CryptoHost {
  random(length: number): ArrayBuffer;
  randomUUID(): string;
  digest(algorithm: Wire, data: ArrayBuffer, ...extras: ArrayBuffer[]): Result<ArrayBuffer>;
  encrypt(algorithm: Wire, key: string, data: ArrayBuffer, ...extras: ArrayBuffer[]): Result<ArrayBuffer>;
  decrypt(algorithm: Wire, key: string, data: ArrayBuffer, ...extras: ArrayBuffer[]): Result<ArrayBuffer>;
  sign(algorithm: Wire, key: string, data: ArrayBuffer, ...extras: ArrayBuffer[]): Result<ArrayBuffer>;
  verify(algorithm: Wire, key: string, signature: ArrayBuffer, data: ArrayBuffer, ...extras: ArrayBuffer[]): Result<boolean>;
  generateKey(algorithm: Wire, extractable: boolean, usages: string[], ...extras: ArrayBuffer[]): Result<KeysText>;
  importKey(format: string, keyData: ArrayBuffer | Wire, algorithm: Wire, extractable: boolean, usages: string[], ...extras: ArrayBuffer[]): Result<KeysText>;
  exportKey(format: string, key: string): Result<ArrayBuffer | Wire>;
  deriveBits(algorithm: Wire, baseKey: string, length: number | string | null, ...extras: ArrayBuffer[]): Result<ArrayBuffer>;
  deriveKey(algorithm: Wire, baseKey: string, derivedKeyType: Wire, extractable: boolean, usages: string[], ...extras: ArrayBuffer[]): Result<KeysText>;
  wrapKey(format: string, key: string, wrappingKey: string, wrapAlgorithm: Wire, ...extras: ArrayBuffer[]): Result<ArrayBuffer>;
  unwrapKey(
    format: string,
    wrappedKey: ArrayBuffer,
    unwrappingKey: string,
    unwrapAlgorithm: Wire,
    unwrappedKeyAlgorithm: Wire,
    extractable: boolean,
    usages: string[],
    ...extras: ArrayBuffer[]
  ): Result<KeysText>;
}

/**
 * Members of the algorithm dictionaries by type (h: hash, n: number, s: string, b: bytes, k: key),
 * the same table as the host's (crypto-algorithm.ts).
 */
const MEMBERS = 'additionalData:b counter:b hash:h info:b iterations:n iv:b label:b length:n modulusLength:n namedCurve:s public:k publicExponent:b salt:b saltLength:n tagLength:n'
  .split(' ')
  .map((entry) => entry.split(':'));
const JWK_MEMBERS = 'alg crv d dp dq e ext k key_ops kty n oth p q qi use x y'.split(' ');
const INTEGER_ARRAYS = 'Int8Array Uint8Array Uint8ClampedArray Int16Array Uint16Array Int32Array Uint32Array BigInt64Array BigUint64Array'.split(' ');
const MAX_RANDOM_BYTES = 65_536;

const isObject = (value: unknown): value is Record<PropertyKey, unknown> => (typeof value === 'object' && value !== null) || typeof value === 'function';
const dictionary = (): Wire => Object.create(null) as Wire;
/** A number as the host takes it: JSON has no NaN or Infinity, so those go as text. */
const numberOf = (value: unknown): number | string => {
  const number = +(value as number);
  return Number.isFinite(number) ? number : `${number}`;
};

export default function install(host: CryptoHost, global: Global): void {
  const DOMException = global.DOMException as new (message: string, name: string) => Error;
  const TOKEN = {};
  const { isView } = ArrayBuffer;
  const getter = (target: object, name: PropertyKey) => Object.getOwnPropertyDescriptor(target, name)?.get as (this: unknown) => unknown;
  const typedArray = Object.getPrototypeOf(Uint8Array.prototype) as object;
  const typedArrayName = getter(typedArray, Symbol.toStringTag);
  const typedArrayParts = ['buffer', 'byteOffset', 'byteLength'].map((name) => getter(typedArray, name));
  const dataViewParts = ['buffer', 'byteOffset', 'byteLength'].map((name) => getter(DataView.prototype, name));
  const arrayBufferLength = getter(ArrayBuffer.prototype, 'byteLength');
  const { slice } = ArrayBuffer.prototype;
  const { parse } = JSON;
  const Bytes = Uint8Array;

  /** [buffer, byteOffset, byteLength] of a view or an ArrayBuffer; null for anything else. */
  const spanOf = (value: unknown): [ArrayBuffer, number, number] | null => {
    if (isView(value)) return (typedArrayName.call(value) === undefined ? dataViewParts : typedArrayParts).map((get) => get.call(value)) as [ArrayBuffer, number, number];
    try {
      return [value as ArrayBuffer, 0, arrayBufferLength.call(value) as number];
    } catch {
      return null;
    }
  };
  /** A copy of the bytes a BufferSource holds (views: only their own bytes). */
  const bytesOf = (value: unknown, what: string): ArrayBuffer => {
    const span = spanOf(value);
    if (!span) throw new TypeError(`The ${what} argument is not an ArrayBuffer, a TypedArray or a DataView.`);
    return slice.call(span[0], span[1], span[1] + span[2]);
  };

  let idOf: (key: unknown, what: string) => string;
  let isKey: (value: unknown) => boolean;

  class CryptoKey {
    readonly #id: string;
    readonly #type: string;
    readonly #extractable: boolean;
    readonly #algorithm: Record<string, unknown>;
    readonly #usages: string[];

    static {
      isKey = (value) => isObject(value) && #id in value;
      idOf = (key, what) => {
        if (!isKey(key)) throw new TypeError(`The ${what} argument is not a CryptoKey.`);
        return (key as CryptoKey).#id;
      };
    }

    constructor(token: unknown, info: KeyInfo) {
      if (token !== TOKEN) throw new TypeError('Illegal constructor');
      const { algorithm } = info;
      if (Array.isArray(algorithm.publicExponent)) algorithm.publicExponent = new Bytes(algorithm.publicExponent as number[]);
      this.#id = info.id;
      this.#type = info.type;
      this.#extractable = info.extractable;
      this.#algorithm = algorithm;
      this.#usages = info.usages;
    }

    get type(): string {
      return this.#type;
    }

    get extractable(): boolean {
      return this.#extractable;
    }

    get algorithm(): Record<string, unknown> {
      return this.#algorithm;
    }

    get usages(): string[] {
      return this.#usages;
    }
  }

  const keyOf = (info: KeyInfo) => new CryptoKey(TOKEN, info);
  const keysOf = (text: KeysText) => {
    const made = parse(text) as KeyInfo | { publicKey: KeyInfo; privateKey: KeyInfo };
    return 'id' in made ? keyOf(made) : { publicKey: keyOf(made.publicKey), privateKey: keyOf(made.privateKey) };
  };
  const keyFrom = (text: KeysText) => keysOf(text) as CryptoKey;

  /** The arguments of one call as the host takes them: algorithms as Wire, the bytes they hold as extra arguments. */
  class Call {
    readonly extras: ArrayBuffer[] = [];

    algorithm(value: unknown): Wire {
      const wire = dictionary();
      if (!isObject(value)) {
        wire.name = `${value as string}`;
        return wire;
      }
      if (value.name !== undefined) wire.name = `${value.name as string}`;
      for (const [member, type] of MEMBERS) {
        const item = value[member];
        if (item !== undefined) wire[member] = this.member(type, item);
      }
      return wire;
    }

    private member(type: string, value: unknown): unknown {
      switch (type) {
        case 'n':
          return numberOf(value);
        case 's':
          return `${value as string}`;
        case 'h': {
          if (!isObject(value)) return `${value as string}`;
          const { name } = value;
          return this.algorithm(name === undefined ? {} : `${name as string}`);
        }
        case 'b': {
          if (!spanOf(value)) return null;
          const marker = dictionary();
          marker.$bytes = this.extras.push(bytesOf(value, '')) - 1;
          return marker;
        }
        default: {
          if (!isKey(value)) return null;
          const marker = dictionary();
          marker.$key = idOf(value, '');
          return marker;
        }
      }
    }
  }

  const stringsOf = (value: unknown, what: string): string[] => {
    if (!isObject(value) || typeof value[Symbol.iterator] !== 'function') throw new TypeError(`The ${what} argument is not a sequence.`);
    const list: string[] = [];
    for (const item of value as unknown as Iterable<unknown>) list.push(`${item as string}`);
    return list;
  };

  const jwkOf = (value: unknown): Wire => {
    if (spanOf(value) || (value !== undefined && value !== null && !isObject(value))) throw new TypeError('The keyData of a "jwk" import must be a JsonWebKey object.');
    const jwk = dictionary();
    for (const member of JWK_MEMBERS) {
      const item = value?.[member];
      if (item === undefined) continue;
      if (member === 'ext') jwk.ext = !!item;
      else if (member === 'key_ops') jwk.key_ops = stringsOf(item, 'key_ops');
      else if (member === 'oth') {
        jwk.oth = [...(item as Iterable<Record<string, unknown>>)].map((prime) => {
          const info = dictionary();
          for (const part of ['d', 'r', 't']) if (prime?.[part] !== undefined) info[part] = `${prime[part] as string}`;
          return info;
        });
      } else jwk[member] = `${item as string}`;
    }
    return jwk;
  };

  const subtle = Object.create(null) as SubtleCrypto;
  /** WebIDL's checks of every SubtleCrypto method: a real `this`, enough arguments. */
  const check = (self: unknown, given: number, needed: number, method: string) => {
    if (self !== subtle) throw new TypeError('Illegal invocation');
    if (given < needed) throw new TypeError(`Failed to execute '${method}' on 'SubtleCrypto': ${needed} arguments required, but only ${given} present.`);
  };

  class SubtleCrypto {
    constructor(token: unknown) {
      if (token !== TOKEN) throw new TypeError('Illegal constructor');
    }

    async encrypt(algorithm: unknown, key: unknown, data: unknown): Promise<ArrayBuffer> {
      check(this, arguments.length, 3, 'encrypt');
      const id = idOf(key, 'key');
      const bytes = bytesOf(data, 'data');
      const call = new Call();
      return host.encrypt(call.algorithm(algorithm), id, bytes, ...call.extras);
    }

    async decrypt(algorithm: unknown, key: unknown, data: unknown): Promise<ArrayBuffer> {
      check(this, arguments.length, 3, 'decrypt');
      const id = idOf(key, 'key');
      const bytes = bytesOf(data, 'data');
      const call = new Call();
      return host.decrypt(call.algorithm(algorithm), id, bytes, ...call.extras);
    }

    async sign(algorithm: unknown, key: unknown, data: unknown): Promise<ArrayBuffer> {
      check(this, arguments.length, 3, 'sign');
      const id = idOf(key, 'key');
      const bytes = bytesOf(data, 'data');
      const call = new Call();
      return host.sign(call.algorithm(algorithm), id, bytes, ...call.extras);
    }

    async verify(algorithm: unknown, key: unknown, signature: unknown, data: unknown): Promise<boolean> {
      check(this, arguments.length, 4, 'verify');
      const id = idOf(key, 'key');
      const signatureBytes = bytesOf(signature, 'signature');
      const bytes = bytesOf(data, 'data');
      const call = new Call();
      return host.verify(call.algorithm(algorithm), id, signatureBytes, bytes, ...call.extras);
    }

    async digest(algorithm: unknown, data: unknown): Promise<ArrayBuffer> {
      check(this, arguments.length, 2, 'digest');
      const bytes = bytesOf(data, 'data');
      const call = new Call();
      return host.digest(call.algorithm(algorithm), bytes, ...call.extras);
    }

    async generateKey(algorithm: unknown, extractable: unknown, keyUsages: unknown): Promise<CryptoKey | { publicKey: CryptoKey; privateKey: CryptoKey }> {
      check(this, arguments.length, 3, 'generateKey');
      const usages = stringsOf(keyUsages, 'keyUsages');
      const call = new Call();
      return keysOf(await host.generateKey(call.algorithm(algorithm), !!extractable, usages, ...call.extras));
    }

    async deriveKey(algorithm: unknown, baseKey: unknown, derivedKeyType: unknown, extractable: unknown, keyUsages: unknown): Promise<CryptoKey> {
      check(this, arguments.length, 5, 'deriveKey');
      const id = idOf(baseKey, 'baseKey');
      const usages = stringsOf(keyUsages, 'keyUsages');
      const call = new Call();
      return keyFrom(await host.deriveKey(call.algorithm(algorithm), id, call.algorithm(derivedKeyType), !!extractable, usages, ...call.extras));
    }

    async deriveBits(algorithm: unknown, baseKey: unknown, length: unknown = null): Promise<ArrayBuffer> {
      check(this, arguments.length, 2, 'deriveBits');
      const id = idOf(baseKey, 'baseKey');
      const call = new Call();
      const bits = length === null ? null : numberOf(length);
      return host.deriveBits(call.algorithm(algorithm), id, bits, ...call.extras);
    }

    async importKey(format: unknown, keyData: unknown, algorithm: unknown, extractable: unknown, keyUsages: unknown): Promise<CryptoKey> {
      check(this, arguments.length, 5, 'importKey');
      const kind = `${format as string}`;
      const data = kind === 'jwk' ? jwkOf(keyData) : bytesOf(keyData, 'keyData');
      const usages = stringsOf(keyUsages, 'keyUsages');
      const call = new Call();
      return keyFrom(await host.importKey(kind, data, call.algorithm(algorithm), !!extractable, usages, ...call.extras));
    }

    async exportKey(format: unknown, key: unknown): Promise<ArrayBuffer | Wire> {
      check(this, arguments.length, 2, 'exportKey');
      const kind = `${format as string}`;
      return host.exportKey(kind, idOf(key, 'key'));
    }

    async wrapKey(format: unknown, key: unknown, wrappingKey: unknown, wrapAlgorithm: unknown): Promise<ArrayBuffer> {
      check(this, arguments.length, 4, 'wrapKey');
      const kind = `${format as string}`;
      const ids = [idOf(key, 'key'), idOf(wrappingKey, 'wrappingKey')];
      const call = new Call();
      return host.wrapKey(kind, ids[0], ids[1], call.algorithm(wrapAlgorithm), ...call.extras);
    }

    async unwrapKey(
      format: unknown,
      wrappedKey: unknown,
      unwrappingKey: unknown,
      unwrapAlgorithm: unknown,
      unwrappedKeyAlgorithm: unknown,
      extractable: unknown,
      keyUsages: unknown,
    ): Promise<CryptoKey> {
      check(this, arguments.length, 7, 'unwrapKey');
      const kind = `${format as string}`;
      const wrapped = bytesOf(wrappedKey, 'wrappedKey');
      const id = idOf(unwrappingKey, 'unwrappingKey');
      const usages = stringsOf(keyUsages, 'keyUsages');
      const call = new Call();
      return keyFrom(await host.unwrapKey(kind, wrapped, id, call.algorithm(unwrapAlgorithm), call.algorithm(unwrappedKeyAlgorithm), !!extractable, usages, ...call.extras));
    }
  }

  const crypto = Object.create(null) as Crypto;

  class Crypto {
    constructor(token: unknown) {
      if (token !== TOKEN) throw new TypeError('Illegal constructor');
    }

    get subtle(): SubtleCrypto {
      if (this !== crypto) throw new TypeError('Illegal invocation');
      return subtle;
    }

    getRandomValues<T>(array: T): T {
      if (this !== crypto) throw new TypeError('Illegal invocation');
      if (arguments.length < 1) throw new TypeError("Failed to execute 'getRandomValues' on 'Crypto': 1 argument required, but only 0 present.");
      if (!isView(array)) throw new TypeError("Failed to execute 'getRandomValues' on 'Crypto': parameter 1 is not of type 'ArrayBufferView'.");
      if (!INTEGER_ARRAYS.includes(typedArrayName.call(array) as string)) {
        throw new DOMException("Failed to execute 'getRandomValues' on 'Crypto': The provided ArrayBufferView is not an integer array type.", 'TypeMismatchError');
      }
      const [buffer, offset, length] = typedArrayParts.map((get) => get.call(array)) as [ArrayBuffer, number, number];
      if (length > MAX_RANDOM_BYTES) {
        throw new DOMException(`Failed to execute 'getRandomValues' on 'Crypto': The ArrayBufferView's byte length (${length}) exceeds the number of bytes of entropy available via this API (${MAX_RANDOM_BYTES}).`, 'QuotaExceededError');
      }
      if (length > 0) new Bytes(buffer, offset, length).set(new Bytes(host.random(length)));
      return array;
    }

    randomUUID(): string {
      if (this !== crypto) throw new TypeError('Illegal invocation');
      return host.randomUUID();
    }
  }

  // WebIDL: operations and attributes are enumerable, and each prototype has a toStringTag.
  for (const [constructor, tag] of [
    [Crypto, 'Crypto'],
    [SubtleCrypto, 'SubtleCrypto'],
    [CryptoKey, 'CryptoKey'],
  ] as const) {
    const prototype = constructor.prototype as object;
    for (const name of Object.getOwnPropertyNames(prototype)) if (name !== 'constructor') Object.defineProperty(prototype, name, { enumerable: true });
    Object.defineProperty(prototype, Symbol.toStringTag, { value: tag, configurable: true });
  }
  Object.setPrototypeOf(subtle, SubtleCrypto.prototype);
  Object.setPrototypeOf(crypto, Crypto.prototype);

  defineGlobal(global, 'crypto', crypto);
  defineGlobal(global, 'Crypto', Crypto);
  defineGlobal(global, 'SubtleCrypto', SubtleCrypto);
  defineGlobal(global, 'CryptoKey', CryptoKey);
}
