/**
 * The `Context` API and the standard globals available to Custom Code connectors, for editors and
 * type checks: the ECMAScript library and exactly what a connector has, no browser or Node API.
 * A connector is the body of an async function: top-level `await` and `return` work.
 * Reference it from a connector file with:  /// <reference path="./context.d.ts" />
 */
/// <reference no-default-lib="true" />
/// <reference lib="es2024" />

/** A file uploaded through GenericIntegrationFileTransfer (the bytes stay in the file store). */
interface ConnectorFile {
  Id: string;
  FileName: string;
  ContentType: string;
  Size: number;
  Sha256: string;
  PartName: string;
}

/** The webhook entity: what the caller sent, and the ResponseBody that becomes the reply. */
interface WebhookEntity {
  /** The caller's query parameters in URL query format (`a=1&b=2`), service parameters removed. */
  RequestParams: string;
  /** The request headers in URL query format; Authorization and Cookie are never stored. */
  RequestHeaders: string;
  /** JSON bodies parsed, form bodies as an object, other text as a string, an empty body as null. */
  RequestBody: any;
  /** The reply to the caller: an object is sent as JSON (or XML), a string as text. At most 1,000 levels of nested arrays and objects. */
  ResponseBody: any;
  RequestFiles?: ConnectorFile[];
  [field: string]: any;
}

interface ConnectorHttpRequest {
  /** GET (default), HEAD, POST, PUT, PATCH, DELETE or OPTIONS. */
  method?: string;
  /** http or https; the host must be in the integration's allowed hosts. */
  url: string;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON (with Content-Type: application/json). At most 10 MiB. */
  body?: unknown;
  /** Time limit of this request in milliseconds (default 30 s). */
  timeoutMs?: number;
}

interface ConnectorHttpResponse {
  status: number;
  statusText: string;
  /** Response headers, names in lower case. */
  headers: Record<string, string>;
  /** The body as text. */
  body: string;
  /** The body parsed, when the response is JSON. */
  json?: any;
  /** The URL that answered, after redirects. */
  url: string;
}

interface ReadFileOptions {
  /** First byte to read (default 0). */
  offset?: number;
  /** Bytes to read (at most 8 MiB per call); default: to the end of the file, which must then fit in one call. */
  length?: number;
  /** "utf8" (default) and "base64" give a string, "bytes" an ArrayBuffer. */
  encoding?: "utf8" | "base64" | "bytes";
}

/**
 * How a call proved who sent it: the scheme of the integration's `inboundAuth` that verified it (its
 * signature, or its key), or "bearer" for a call made with a token of the bot; and the producer's id of
 * the delivery (X-GitHub-Delivery, webhook-id, Stripe's event id, ...), null when it sent none. A delivery
 * sent again with the same id runs once: its repeats get the first answer (docs/inbound.md).
 */
interface InboundAuthInfo {
  readonly scheme: "bearer" | "github" | "stripe" | "shopify" | "slack" | "hubspot-v3" | "twilio" | "standard-webhooks" | "hmac" | "basic" | "api-key";
  readonly deliveryId: string | null;
}

/** What a step's function gets: pass `idempotencyKey` downstream (an `Idempotency-Key` header) so a retried call happens once. */
interface StepRun {
  /** The same for this invocation, step name and occurrence on every attempt and every executor: 43 characters of [A-Za-z0-9_-]. */
  readonly idempotencyKey: string;
  /** 1 for the first attempt, 2 for the first retry... */
  readonly attempt: number;
}

/** Milliseconds, or a text like "30 seconds", "5 minutes", "2 hours", "1 day" (also ms, s, min, h, d, w and fractions: "1.5 hours"); at most 365 days. */
type Duration = number | string;

interface StepOptions {
  /** Attempts after the first when `fn` throws (a `Context.NonRetryableError` is never retried). Default: none. */
  retries?: {
    /** Retries after the first attempt: 0 to 1000. */
    limit: number;
    /** The wait before the first retry (default 1 second). */
    delay?: Duration;
    /** How later waits grow: the same (`constant`), delay x retry (`linear`), or doubling (`exponential`, the default). */
    backoff?: "constant" | "linear" | "exponential";
  };
  /** Each attempt's time limit: past it the attempt fails with a TimeoutError (retried like any error). Default: none. */
  timeout?: Duration;
}

/** Thrown by a step's function, ends the step at once: no retry. */
interface NonRetryableError extends Error {}
interface NonRetryableErrorConstructor {
  new (message?: string): NonRetryableError;
  readonly prototype: NonRetryableError;
}

interface ConnectorContext {
  /** A copy of the request entity (the same object on every call of one run), or null when it is not initialized. */
  GetRequestEntity(): WebhookEntity | null;
  /**
   * The request body exactly as the caller sent it, to check a producer's signature over the exact
   * bytes: the text as received (a byte order mark included; the gateway refuses bodies that are not
   * valid UTF-8, so the text is exact), "base64" text of its UTF-8 bytes, or those bytes as an
   * ArrayBuffer ("bytes"). "" for an empty body; null for GenericIntegrationFileTransfer, whose
   * multipart body has no single text (its fields are in RequestBody, its files in RequestFiles).
   * A new copy on every call. Throws RangeError for a body over half the integration's
   * `limits.memoryMiB`, TypeError for other options.
   */
  GetRawRequestBody(options?: { encoding?: "utf8" | "base64" }): string | null;
  GetRawRequestBody(options: { encoding: "bytes" }): ArrayBuffer | null;
  /** Sets the entity whose ResponseBody becomes the reply (read when the run ends). */
  SetResponseEntity(entity: { ResponseBody?: unknown; [field: string]: unknown }): void;
  /**
   * Ends the run at once; the caller gets 422 with this title and message (at most 200 and 2,000
   * characters: longer texts are cut, the cut marked with an ellipsis).
   */
  RaiseError(title: string, message: string): never;
  /**
   * Writes a log line of the invocation; objects are written as JSON. While the run goes on, its lines
   * are stored about once a second (readable with `gi invocations show` and the control API before it
   * ends, and kept if its executor dies). Logging more than the integration's `limits.logKiB` (64 KiB
   * by default), or more than 10,000 lines, ends the run.
   */
  Log(...values: unknown[]): void;
  /**
   * Reports progress (0 to 100), shown to callers polling an asynchronous run. At most one update a
   * second leaves the run: calls in between replace the one waiting (the latest wins, and the last is
   * always delivered). The message is cut to 1,000 characters.
   */
  SetProgress(percent: number, message?: string): void;
  /**
   * Reads a file of this call's RequestFiles by its Id: the whole file or a range (cut short at the
   * end of the file; empty past it). Rejects for ids of other requests, bad options, or more than
   * 8 MiB in one call. Starting more file reads and HTTP requests at once than the integration's
   * `limits.pendingCalls` (8 by default) ends the run.
   */
  ReadFile(id: string, options?: ReadFileOptions & { encoding?: "utf8" | "base64" }): Promise<string>;
  ReadFile(id: string, options: ReadFileOptions & { encoding: "bytes" }): Promise<ArrayBuffer>;
  /**
   * The secrets of the run (`gi secrets set`), by name: the bot's, and the integration's (which win
   * over the bot's of the same name). A frozen object; a name that is not set reads `undefined`. Their
   * values (of 4 characters or more) are replaced by `[secret]` in log lines, RaiseError texts, thrown
   * errors' messages and progress messages; the ResponseBody is left as the connector wrote it.
   */
  readonly Secrets: Readonly<Record<string, string | undefined>>;
  /** Which scheme verified this call, and the producer's delivery id: a frozen object, the same at every read. */
  readonly InboundAuth: InboundAuthInfo;
  /**
   * A durable step: runs `fn` at most once per invocation for this name and occurrence (the n-th call
   * with this name, counted in call order: a loop makes occurrences 1, 2, 3...). Its result is journalled
   * before the step resolves, as JSON: a re-run of the invocation (a resume after a sleep, a crash, a
   * deploy) gets the journalled result (or error) back without calling `fn`. Resolves with the result's
   * JSON parsed again (`undefined` stays `undefined`, a Date becomes its ISO text). Throws the step's last
   * error once its retries are spent; a result that is not JSON data, or over the size limit (1 MiB by
   * default), fails the step at once. Do not call Context's durable calls inside `fn`.
   */
  Step<T>(name: string, fn: (step: StepRun) => T | Promise<T>, options?: StepOptions): Promise<T>;
  /**
   * Waits `duration`, durably: its end is fixed when the run first reaches it. A short sleep waits in the
   * sandbox; a longer one (above the service's threshold, 2 s by default) suspends the run, which frees
   * its executor and resumes from its journal at the wake time, even after restarts.
   */
  Sleep(name: string, duration: Duration): Promise<void>;
  /** Like `Sleep`, until a point in time: a Date, a timestamp in milliseconds, or an ISO 8601 text with its time zone. */
  SleepUntil(name: string, when: Date | number | string): Promise<void>;
  /**
   * Waits for an event an outside system sends to this invocation (`POST .../GenericIntegrationEvent?
   * invocationId=&name=`): resolves with its JSON payload, or `null` once `timeout` (default 24 hours)
   * passed. The run is suspended meanwhile. An event sent before the run waits is kept for it.
   */
  WaitForEvent<T = unknown>(name: string, options?: { timeout?: Duration }): Promise<T | null>;
  /** `throw new Context.NonRetryableError(message)` in a step's function fails the step at once, without retries. */
  readonly NonRetryableError: NonRetryableErrorConstructor;
  Http: {
    /**
     * An HTTP request to one of the integration's allowed hosts. Private, loopback and link-local
     * addresses are refused, also through DNS names and redirects. Rejects with an Error whose
     * message says why; an HTTP error status is a normal response. Counts against the
     * integration's `limits.pendingCalls` until it settles. A run starts at most 100 requests and
     * file reads a second (in bursts of 100); more wait for their turn.
     */
    Request(request: ConnectorHttpRequest): Promise<ConnectorHttpResponse>;
  };
}

declare const Context: ConnectorContext;

/** `console.log/info/debug/warn` write info lines, `console.error` error lines, like Context.Log. */
declare const console: {
  log(...values: unknown[]): void;
  info(...values: unknown[]): void;
  debug(...values: unknown[]): void;
  warn(...values: unknown[]): void;
  error(...values: unknown[]): void;
};

// ---------------------------------------------------------------------------------------------
// crypto: the Web Cryptography API, as in Workers and browsers. The host does the work (Node's
// WebCrypto) and keeps the keys; a CryptoKey here is a handle valid for the run that made it.
// Limits (docs/connectors.md, "Standard globals"): 8 MiB of data per call, key data up to 16 KiB,
// RSA keys generated up to 4096 bits and imported up to 8192, PBKDF2 up to 2,000,000 iterations
// times output blocks per call, 1,000 different keys per run. Each crypto.subtle call counts
// against limits.pendingCalls until it settles, and the time its work takes counts as CPU time.
// ---------------------------------------------------------------------------------------------

type KeyFormat = "jwk" | "pkcs8" | "raw" | "spki";
type KeyType = "private" | "public" | "secret";
type KeyUsage = "decrypt" | "deriveBits" | "deriveKey" | "encrypt" | "sign" | "unwrapKey" | "verify" | "wrapKey";
/** "SHA-1", "SHA-256", "SHA-384", "SHA-512", "HMAC", "RSASSA-PKCS1-v1_5", "RSA-PSS", "RSA-OAEP", "ECDSA", "ECDH", "AES-GCM", "AES-CBC", "AES-CTR", "AES-KW", "HKDF", "PBKDF2", "Ed25519", "X25519" (any case). */
type AlgorithmIdentifier = Algorithm | string;
/** "SHA-1", "SHA-256", "SHA-384" or "SHA-512". */
type HashAlgorithmIdentifier = AlgorithmIdentifier;
/** "P-256", "P-384" or "P-521". */
type NamedCurve = string;
/** An unsigned big-endian integer, e.g. `new Uint8Array([1, 0, 1])` for 65537. */
type BigInteger = Uint8Array;
type IntegerArray = Int8Array | Uint8Array | Uint8ClampedArray | Int16Array | Uint16Array | Int32Array | Uint32Array | BigInt64Array | BigUint64Array;

interface Algorithm {
  name: string;
}
interface KeyAlgorithm {
  name: string;
}
interface RsaHashedKeyGenParams extends Algorithm {
  /** At most 4096 bits here. */
  modulusLength: number;
  publicExponent: BigInteger;
  hash: HashAlgorithmIdentifier;
}
interface RsaHashedImportParams extends Algorithm {
  hash: HashAlgorithmIdentifier;
}
interface RsaPssParams extends Algorithm {
  saltLength: number;
}
interface RsaOaepParams extends Algorithm {
  label?: BufferSource;
}
interface EcKeyGenParams extends Algorithm {
  namedCurve: NamedCurve;
}
interface EcKeyImportParams extends Algorithm {
  namedCurve: NamedCurve;
}
interface EcdsaParams extends Algorithm {
  hash: HashAlgorithmIdentifier;
}
interface EcdhKeyDeriveParams extends Algorithm {
  public: CryptoKey;
}
interface HmacKeyGenParams extends Algorithm {
  hash: HashAlgorithmIdentifier;
  /** In bits; the hash's block size by default. */
  length?: number;
}
interface HmacImportParams extends Algorithm {
  hash: HashAlgorithmIdentifier;
  length?: number;
}
interface AesKeyGenParams extends Algorithm {
  length: number;
}
interface AesDerivedKeyParams extends Algorithm {
  length: number;
}
interface AesGcmParams extends Algorithm {
  iv: BufferSource;
  additionalData?: BufferSource;
  tagLength?: number;
}
interface AesCbcParams extends Algorithm {
  iv: BufferSource;
}
interface AesCtrParams extends Algorithm {
  counter: BufferSource;
  length: number;
}
interface HkdfParams extends Algorithm {
  hash: HashAlgorithmIdentifier;
  salt: BufferSource;
  info: BufferSource;
}
interface Pbkdf2Params extends Algorithm {
  hash: HashAlgorithmIdentifier;
  salt: BufferSource;
  /** Iterations times output blocks (one per hash output) at most 2,000,000 per call here. */
  iterations: number;
}
interface RsaHashedKeyAlgorithm extends KeyAlgorithm {
  modulusLength: number;
  publicExponent: BigInteger;
  hash: KeyAlgorithm;
}
interface EcKeyAlgorithm extends KeyAlgorithm {
  namedCurve: NamedCurve;
}
interface HmacKeyAlgorithm extends KeyAlgorithm {
  hash: KeyAlgorithm;
  length: number;
}
interface AesKeyAlgorithm extends KeyAlgorithm {
  length: number;
}
interface RsaOtherPrimesInfo {
  d?: string;
  r?: string;
  t?: string;
}
interface JsonWebKey {
  alg?: string;
  crv?: string;
  d?: string;
  dp?: string;
  dq?: string;
  e?: string;
  ext?: boolean;
  k?: string;
  key_ops?: string[];
  kty?: string;
  n?: string;
  oth?: RsaOtherPrimesInfo[];
  p?: string;
  q?: string;
  qi?: string;
  use?: string;
  x?: string;
  y?: string;
}

/** A key held by the host; `new CryptoKey()` throws. Not serializable: it lives as long as its run. */
interface CryptoKey {
  readonly algorithm: KeyAlgorithm | RsaHashedKeyAlgorithm | EcKeyAlgorithm | HmacKeyAlgorithm | AesKeyAlgorithm;
  readonly extractable: boolean;
  readonly type: KeyType;
  readonly usages: KeyUsage[];
}
interface CryptoKeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
}

/**
 * Every method returns a promise; errors are DOMExceptions by name (NotSupportedError,
 * InvalidAccessError, DataError, OperationError, SyntaxError, QuotaExceededError for this runtime's
 * limits) or TypeErrors, as the standard says.
 */
interface SubtleCrypto {
  digest(algorithm: AlgorithmIdentifier, data: BufferSource): Promise<ArrayBuffer>;
  encrypt(algorithm: AlgorithmIdentifier | RsaOaepParams | AesCtrParams | AesCbcParams | AesGcmParams, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  decrypt(algorithm: AlgorithmIdentifier | RsaOaepParams | AesCtrParams | AesCbcParams | AesGcmParams, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  sign(algorithm: AlgorithmIdentifier | RsaPssParams | EcdsaParams, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer>;
  verify(algorithm: AlgorithmIdentifier | RsaPssParams | EcdsaParams, key: CryptoKey, signature: BufferSource, data: BufferSource): Promise<boolean>;
  generateKey(algorithm: "Ed25519" | "X25519" | { name: "Ed25519" | "X25519" }, extractable: boolean, keyUsages: readonly KeyUsage[]): Promise<CryptoKeyPair>;
  generateKey(algorithm: RsaHashedKeyGenParams | EcKeyGenParams, extractable: boolean, keyUsages: readonly KeyUsage[]): Promise<CryptoKeyPair>;
  generateKey(algorithm: AesKeyGenParams | HmacKeyGenParams, extractable: boolean, keyUsages: readonly KeyUsage[]): Promise<CryptoKey>;
  importKey(
    format: "jwk",
    keyData: JsonWebKey,
    algorithm: AlgorithmIdentifier | RsaHashedImportParams | EcKeyImportParams | HmacImportParams | AesKeyAlgorithm,
    extractable: boolean,
    keyUsages: readonly KeyUsage[],
  ): Promise<CryptoKey>;
  importKey(
    format: Exclude<KeyFormat, "jwk">,
    keyData: BufferSource,
    algorithm: AlgorithmIdentifier | RsaHashedImportParams | EcKeyImportParams | HmacImportParams | AesKeyAlgorithm,
    extractable: boolean,
    keyUsages: readonly KeyUsage[],
  ): Promise<CryptoKey>;
  /** Only extractable keys. */
  exportKey(format: "jwk", key: CryptoKey): Promise<JsonWebKey>;
  exportKey(format: Exclude<KeyFormat, "jwk">, key: CryptoKey): Promise<ArrayBuffer>;
  deriveBits(algorithm: AlgorithmIdentifier | EcdhKeyDeriveParams | HkdfParams | Pbkdf2Params, baseKey: CryptoKey, length?: number | null): Promise<ArrayBuffer>;
  deriveKey(
    algorithm: AlgorithmIdentifier | EcdhKeyDeriveParams | HkdfParams | Pbkdf2Params,
    baseKey: CryptoKey,
    derivedKeyType: AlgorithmIdentifier | AesDerivedKeyParams | HmacImportParams,
    extractable: boolean,
    keyUsages: readonly KeyUsage[],
  ): Promise<CryptoKey>;
  wrapKey(format: KeyFormat, key: CryptoKey, wrappingKey: CryptoKey, wrapAlgorithm: AlgorithmIdentifier | RsaOaepParams | AesCtrParams | AesCbcParams | AesGcmParams): Promise<ArrayBuffer>;
  unwrapKey(
    format: KeyFormat,
    wrappedKey: BufferSource,
    unwrappingKey: CryptoKey,
    unwrapAlgorithm: AlgorithmIdentifier | RsaOaepParams | AesCtrParams | AesCbcParams | AesGcmParams,
    unwrappedKeyAlgorithm: AlgorithmIdentifier | RsaHashedImportParams | EcKeyImportParams | HmacImportParams | AesKeyAlgorithm,
    extractable: boolean,
    keyUsages: readonly KeyUsage[],
  ): Promise<CryptoKey>;
}

interface Crypto {
  readonly subtle: SubtleCrypto;
  /** Fills an integer array with random bytes from the host's CSPRNG, in place, at most 65,536 bytes per call, and returns it. */
  getRandomValues<T extends IntegerArray>(array: T): T;
  /** A random version 4 UUID. */
  randomUUID(): `${string}-${string}-${string}-${string}-${string}`;
}

declare var crypto: Crypto;
/** The classes exist for `instanceof`; constructing one throws a TypeError. */
declare var Crypto: { prototype: Crypto; new (): never };
declare var SubtleCrypto: { prototype: SubtleCrypto; new (): never };
declare var CryptoKey: { prototype: CryptoKey; new (): never };
/*
 * Intl and the locale methods of the built-ins (Date#toLocaleString, toLocaleDateString,
 * toLocaleTimeString, Number#toLocaleString, BigInt#toLocaleString, Array#toLocaleString,
 * String#localeCompare, toLocaleUpperCase, toLocaleLowerCase) are the standard ones, declared by
 * TypeScript's ES2024 library (referenced above), and give Node's ICU results. The sandbox's own
 * time zone is UTC and its locale en-US: `new Date().getTimezoneOffset()` is 0; name a `timeZone`
 * (and a locale) for local times, e.g. `date.toLocaleString('de-DE', { timeZone: 'Europe/Berlin' })`.
 */
declare namespace Intl {
  interface PluralRules {
    /** The plural category of a range ("1–2 days"). */
    selectRange(start: number | bigint, end: number | bigint): LDMLPluralRule;
  }
  interface Locale {
    getCalendars(): string[];
    getCollations(): string[];
    getHourCycles(): string[];
    getNumberingSystems(): string[];
    /** The time zones of the locale's region; undefined without a region. */
    getTimeZones(): string[] | undefined;
    getTextInfo(): { direction: "ltr" | "rtl" };
    getWeekInfo(): { firstDay: number; weekend: number[]; minimalDays: number };
  }
}

// Standard globals (docs/connectors.md, "Standard globals"): the web APIs of Workers-style
// runtimes, with their standard behaviour.

/** Timers of the run: dropped when the connector's code settles; waiting counts as wall time, not CPU time. */
declare function setTimeout(callback: (...args: any[]) => void, delayMs?: number, ...args: unknown[]): number;
declare function setInterval(callback: (...args: any[]) => void, delayMs?: number, ...args: unknown[]): number;
declare function clearTimeout(id: number | undefined): void;
declare function clearInterval(id: number | undefined): void;
/** An error the callback throws ends the run Failed. */
declare function queueMicrotask(callback: () => void): void;
declare const performance: {
  /** Milliseconds since the run started. */
  now(): number;
  readonly timeOrigin: number;
};
declare const navigator: { readonly userAgent: string };
declare const self: typeof globalThis;

declare class DOMException extends Error {
  constructor(message?: string, name?: string);
  readonly name: string;
  readonly message: string;
  /** The legacy numeric code of the name (20 for AbortError), 0 for other names. */
  readonly code: number;
}

declare class URLSearchParams {
  constructor(init?: string | Record<string, string> | Iterable<[string, string]> | URLSearchParams);
  readonly size: number;
  append(name: string, value: string): void;
  delete(name: string, value?: string): void;
  get(name: string): string | null;
  getAll(name: string): string[];
  has(name: string, value?: string): boolean;
  set(name: string, value: string): void;
  sort(): void;
  forEach(callback: (value: string, name: string, params: URLSearchParams) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
  toString(): string;
}

declare class URL {
  constructor(url: string | URL, base?: string | URL);
  static canParse(url: string | URL, base?: string | URL): boolean;
  static parse(url: string | URL, base?: string | URL): URL | null;
  href: string;
  readonly origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  readonly searchParams: URLSearchParams;
  hash: string;
  toString(): string;
  toJSON(): string;
}

/** Bytes: an ArrayBuffer, a SharedArrayBuffer, a typed array or a DataView. */
type BufferSource = ArrayBufferLike | ArrayBufferView;

/** UTF-8 encoding. At most 32 Mi characters per call (a RangeError above). */
declare class TextEncoder {
  readonly encoding: 'utf-8';
  /** Lone surrogates become U+FFFD. */
  encode(input?: string): Uint8Array;
  /** Encodes whole characters while they fit; how many UTF-16 code units were read and bytes written. */
  encodeInto(source: string, destination: Uint8Array): { read: number; written: number };
}

/**
 * Decoding of UTF-8, UTF-16 (LE, BE) and the legacy encodings of the WHATWG Encoding standard
 * ("latin1" and "ascii" are windows-1252). An unknown label is a RangeError. At most 32 MiB per
 * call: decode more in parts with `{ stream: true }`.
 */
declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  readonly encoding: string;
  /** With `fatal`, data that is not valid in the encoding is a TypeError; without, it decodes as U+FFFD. */
  readonly fatal: boolean;
  readonly ignoreBOM: boolean;
  /** With `{ stream: true }` an incomplete character at the end waits for the next call. */
  decode(input?: BufferSource, options?: { stream?: boolean }): string;
}

/** Base64 of a string whose characters are bytes (U+0000 to U+00FF); others are an InvalidCharacterError DOMException. At most 32 Mi characters per call. */
declare function btoa(data: string): string;
/** The bytes of forgiving base64 (whitespace ignored, padding optional) as a string of U+0000 to U+00FF; bad input is an InvalidCharacterError DOMException. At most 32 Mi characters per call. */
declare function atob(data: string): string;

/**
 * A deep copy, as the HTML structured clone algorithm makes it: primitives, Boolean/Number/String/
 * BigInt objects, Date, RegExp, Map, Set, ArrayBuffer, typed arrays, DataView, errors,
 * DOMException, arrays and plain objects (own enumerable properties; class instances become plain
 * objects), cycles and shared references kept. Functions, symbols, WeakMap, WeakSet, WeakRef,
 * promises and platform objects (URL, AbortSignal...) are a DataCloneError DOMException.
 * Transferred ArrayBuffers are detached.
 */
declare function structuredClone<T>(value: T, options?: { transfer?: Iterable<ArrayBuffer> }): T;

/** Ends the run Failed with this error, as an uncaught exception does. */
declare function reportError(error: unknown): void;

interface EventInit {
  bubbles?: boolean;
  cancelable?: boolean;
  composed?: boolean;
}

declare class Event {
  constructor(type: string, eventInitDict?: EventInit);
  static readonly NONE: 0;
  static readonly CAPTURING_PHASE: 1;
  static readonly AT_TARGET: 2;
  static readonly BUBBLING_PHASE: 3;
  readonly NONE: 0;
  readonly CAPTURING_PHASE: 1;
  readonly AT_TARGET: 2;
  readonly BUBBLING_PHASE: 3;
  readonly type: string;
  readonly target: EventTarget | null;
  readonly srcElement: EventTarget | null;
  readonly currentTarget: EventTarget | null;
  composedPath(): EventTarget[];
  readonly eventPhase: number;
  stopPropagation(): void;
  cancelBubble: boolean;
  stopImmediatePropagation(): void;
  readonly bubbles: boolean;
  readonly cancelable: boolean;
  returnValue: boolean;
  preventDefault(): void;
  readonly defaultPrevented: boolean;
  readonly composed: boolean;
  /** True for events the runtime dispatches (an AbortSignal's abort event). */
  readonly isTrusted: boolean;
  readonly timeStamp: number;
  initEvent(type: string, bubbles?: boolean, cancelable?: boolean): void;
}

declare class CustomEvent<T = unknown> extends Event {
  constructor(type: string, eventInitDict?: EventInit & { detail?: T });
  readonly detail: T;
  initCustomEvent(type: string, bubbles?: boolean, cancelable?: boolean, detail?: T): void;
}

type EventListenerOrEventListenerObject = ((event: Event) => void) | { handleEvent(event: Event): void };

interface AddEventListenerOptions {
  capture?: boolean;
  /** Removed after its first call. */
  once?: boolean;
  /** preventDefault() has no effect in this listener. */
  passive?: boolean;
  /** Removed when this signal aborts. */
  signal?: AbortSignal;
}

/** An error a listener throws ends the run Failed, as an error in a timer callback does. */
declare class EventTarget {
  constructor();
  addEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: AddEventListenerOptions | boolean): void;
  removeEventListener(type: string, listener: EventListenerOrEventListenerObject | null, options?: { capture?: boolean } | boolean): void;
  /** False when a listener called preventDefault() on a cancelable event. */
  dispatchEvent(event: Event): boolean;
}

declare class AbortSignal extends EventTarget {
  /** AbortSignals come from an AbortController or from the static methods: `new AbortSignal()` is a TypeError. */
  private constructor();
  /** A signal already aborted (with an AbortError DOMException unless `reason` is given). */
  static abort(reason?: unknown): AbortSignal;
  /** A signal that aborts with a TimeoutError DOMException after `milliseconds`, on the run's timers (dropped with the run; waiting is wall time). */
  static timeout(milliseconds: number): AbortSignal;
  /** A signal that aborts when the first of `signals` does, with its reason. */
  static any(signals: Iterable<AbortSignal>): AbortSignal;
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  onabort: ((this: AbortSignal, event: Event) => unknown) | null;
}

declare class AbortController {
  constructor();
  readonly signal: AbortSignal;
  /** Aborts the signal: with an AbortError DOMException unless `reason` is given. */
  abort(reason?: unknown): void;
}

// ---------------------------------------------------------------------------------------------
// fetch, Request, Response, Headers, Blob, File, FormData: WHATWG Fetch as in Workers, without
// streams (a body is read whole: no `body` stream, no ReadableStream bodies). fetch obeys the rules of
// Context.Http.Request: only the integration's allowedHosts, private, loopback and metadata addresses
// refused (also through DNS and on every redirect), a request body of at most 10 MiB, a response
// of at most 5 MiB (decompressed), 30 s per request, 5 redirects; each fetch counts against
// limits.pendingCalls until it settles. Failures reject with a TypeError saying why; an aborted
// signal rejects with its reason.
// ---------------------------------------------------------------------------------------------

type HeadersInit = [string, string][] | Record<string, string> | Headers;
type BodyInit = string | BufferSource | Blob | FormData | URLSearchParams;
type RequestInfo = Request | string | URL;
type RequestRedirect = "error" | "follow" | "manual";
type FormDataEntryValue = File | string;

/** HTTP headers: names case-insensitive (read back in lower case), iterated sorted by name, values of a name joined with ", " (every set-cookie apart). */
declare class Headers {
  constructor(init?: HeadersInit);
  append(name: string, value: string): void;
  delete(name: string): void;
  get(name: string): string | null;
  /** Each Set-Cookie header of a response, apart. */
  getSetCookie(): string[];
  has(name: string): boolean;
  set(name: string, value: string): void;
  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, string]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<string>;
  [Symbol.iterator](): IterableIterator<[string, string]>;
}

declare class Blob {
  constructor(parts?: Iterable<BufferSource | Blob | string>, options?: { type?: string; endings?: "native" | "transparent" });
  readonly size: number;
  readonly type: string;
  slice(start?: number, end?: number, contentType?: string): Blob;
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
}

declare class File extends Blob {
  constructor(bits: Iterable<BufferSource | Blob | string>, name: string, options?: { type?: string; endings?: "native" | "transparent"; lastModified?: number });
  readonly name: string;
  readonly lastModified: number;
}

/** Form data to send as multipart/form-data, or read from a multipart or urlencoded body. No HTML forms: `new FormData()` only. */
declare class FormData {
  constructor();
  append(name: string, value: string | Blob, filename?: string): void;
  delete(name: string): void;
  get(name: string): FormDataEntryValue | null;
  getAll(name: string): FormDataEntryValue[];
  has(name: string): boolean;
  set(name: string, value: string | Blob, filename?: string): void;
  forEach(callback: (value: FormDataEntryValue, name: string, form: FormData) => void, thisArg?: unknown): void;
  entries(): IterableIterator<[string, FormDataEntryValue]>;
  keys(): IterableIterator<string>;
  values(): IterableIterator<FormDataEntryValue>;
  [Symbol.iterator](): IterableIterator<[string, FormDataEntryValue]>;
}

/** The body readers Request and Response share: each body can be read once (clone() first to read it twice). */
interface BodyReaders {
  readonly bodyUsed: boolean;
  arrayBuffer(): Promise<ArrayBuffer>;
  bytes(): Promise<Uint8Array>;
  text(): Promise<string>;
  /** A SyntaxError when the body is not JSON. */
  json(): Promise<any>;
  blob(): Promise<Blob>;
  /** multipart/form-data or application/x-www-form-urlencoded bodies; a TypeError for others. */
  formData(): Promise<FormData>;
}

interface RequestInit {
  method?: string;
  headers?: HeadersInit;
  body?: BodyInit | null;
  /** 'follow' (the default), 'manual' (the redirect response itself is returned), 'error' (a TypeError). */
  redirect?: RequestRedirect;
  signal?: AbortSignal | null;
  /** Accepted and ignored, as on servers: cache, credentials, mode, referrer, integrity, keepalive... */
  [other: string]: unknown;
}

interface Request extends BodyReaders {}
declare class Request {
  constructor(input: RequestInfo, init?: RequestInit);
  readonly method: string;
  readonly url: string;
  readonly headers: Headers;
  readonly redirect: RequestRedirect;
  readonly signal: AbortSignal;
  readonly cache: string;
  readonly credentials: string;
  readonly mode: string;
  readonly integrity: string;
  readonly keepalive: boolean;
  readonly referrer: string;
  readonly referrerPolicy: string;
  readonly destination: string;
  clone(): Request;
}

interface ResponseInit {
  /** 200 to 599. */
  status?: number;
  statusText?: string;
  headers?: HeadersInit;
}

interface Response extends BodyReaders {}
declare class Response {
  constructor(body?: BodyInit | null, init?: ResponseInit);
  static error(): Response;
  static redirect(url: string | URL, status?: 301 | 302 | 303 | 307 | 308): Response;
  /** A response whose body is `data` as JSON, with Content-Type application/json. */
  static json(data: unknown, init?: ResponseInit): Response;
  /** "basic" for what fetch answers, "default" for responses made here, "error" for Response.error(). */
  readonly type: "basic" | "default" | "error";
  readonly url: string;
  readonly redirected: boolean;
  readonly status: number;
  readonly ok: boolean;
  readonly statusText: string;
  /** Immutable on what fetch answers. */
  readonly headers: Headers;
  clone(): Response;
}

/** Sends a request (see the limits above); resolves with the response whatever its status, rejects with a TypeError when there is none. */
declare function fetch(input: RequestInfo, init?: RequestInit): Promise<Response>;
