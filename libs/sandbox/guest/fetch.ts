/**
 * `fetch`, `Request`, `Response`, `Headers`, `Blob`, `File` and `FormData` (WHATWG Fetch, File API,
 * XHR's FormData) as Workers-style runtimes have them, without streams: a body is bytes held whole.
 * The host sends the request (libs/sandbox/src/http/http-exchange.ts, the rules of Context.Http.Request:
 * allowed hosts, the egress guard on every redirect, limits, the run's budget of host calls) and
 * hands the response back whole; everything else lives here: Request, Response and fetch in this
 * file, Headers, Blob and File, FormData in fetch/.
 */
import type { Global } from './internal/global';
import { usvString } from './internal/global';
import type { Internals } from './internal/internals';
import { list, uncurry } from './internal/primordials';
import { defineInterface, dictionary, domString, requireArguments } from './internal/webidl';
import { blobClasses } from './fetch/blob';
import {
  bufferOf,
  byteRange,
  byteString,
  copyBytes,
  create,
  defineProperty,
  FORBIDDEN_METHODS,
  FORM_TYPE,
  getOwnPropertyDescriptor,
  getOwnPropertyNames,
  includes,
  isObject,
  MAX_REQUEST_BYTES,
  NORMALIZED_METHODS,
  NULL_BODY_STATUSES,
  parse,
  REDIRECT_MODES,
  REDIRECT_STATUSES,
  setPrototypeOf,
  stringify,
  test,
  TEXT_TYPE,
  then,
  TOKEN,
  toUpperCase,
  typedArrayElements,
  type Guard,
} from './fetch/common';
import { formDataClass } from './fetch/form-data';
import { headersClass } from './fetch/headers';

/** The host functions of this module (libs/sandbox/src/host/fetch.host.ts). */
interface FetchHost {
  /** Sends a request (`Wire` as JSON text): the response's head as JSON text (`Head`); its body waits for `take(id)`. */
  send(request: string, body: ArrayBuffer | undefined, id: number): Promise<string>;
  /** The body of the response to request `id`, once. */
  take(id: number): ArrayBuffer;
  /** Aborts request `id` (its signal aborted). */
  abort(id: number): void;
  /** UTF-8 bytes of a string. */
  encode(text: string): ArrayBuffer;
  /** UTF-8 decoding, a BOM dropped, malformed bytes replaced (the Encoding standard's "UTF-8 decode"). */
  decode(bytes: ArrayBuffer): string;
  /** The parts of a multipart/form-data body (`Part[]` as JSON text); a TypeError when it is not one. */
  multipart(bytes: ArrayBuffer, contentType: string): string;
}

interface Wire {
  method: string;
  url: string;
  headers: Record<string, string>;
  redirect: string;
}

interface Head {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  url: string;
  redirected: boolean;
}

/** A body: its bytes (never handed out, only copies of them) and the Content-Type it implies. */
interface BodyState {
  bytes: Uint8Array | null;
  used: boolean;
}

/** What this module uses of the url module's classes. */
interface UrlLike {
  readonly username: string;
  readonly password: string;
}
type UrlConstructor = new (url: string) => UrlLike;
interface SearchParams {
  forEach(callback: (value: string, name: string) => void): void;
}
type SearchParamsConstructor = new (init: string) => SearchParams;

export default function install(host: FetchHost, global: Global, internals: Internals): void {
  const { platformClasses } = internals.core;
  if (!internals.events) throw new TypeError('The events module must be loaded before fetch.');
  const events = internals.events;
  const URLClass = global.URL as UrlConstructor;
  const URLSearchParamsClass = global.URLSearchParams as SearchParamsConstructor;
  const searchParamsToString = uncurry(URLSearchParamsClass.prototype.toString);
  const urlHref = uncurry(getOwnPropertyDescriptor(URLClass.prototype, 'href')?.get as () => string);
  const isSearchParams = (value: object) => platformClasses.some((platform) => platform.name === 'URLSearchParams' && platform.is(value));
  const TOKEN_KEY = {};
  const encode = (text: string) => new Uint8Array(host.encode(text));
  const decode = (bytes: Uint8Array) => (typedArrayElements(bytes) === 0 ? '' : host.decode(bufferOf(bytes)));

  const { Headers, headerListOf, isHeaders, newHeaders, sortedHeaders } = headersClass();
  type Headers = InstanceType<typeof Headers>;
  const blobs = blobClasses(encode, decode);
  const { Blob, File, blobBytes, isBlob, isFile, blobOf, fileOf, blobType } = blobs;
  type Blob = InstanceType<typeof Blob>;
  type File = InstanceType<typeof File>;
  const { FormData, isFormData, encodeMultipart, parseFormData } = formDataClass({ blobs, encode, decode, multipart: (bytes, type) => host.multipart(bytes, type), URLSearchParams: URLSearchParamsClass });
  type FormData = InstanceType<typeof FormData>;

  // ----- Bodies -----

  /** The bytes of a body init and the Content-Type they imply ("extract a body"). */
  function extractBody(init: unknown): { bytes: Uint8Array; type: string | null } {
    if (isObject(init)) {
      if (isBlob(init)) {
        const blob = init as Blob;
        return { bytes: blobBytes(blob), type: blob.type === '' ? null : blob.type };
      }
      const range = byteRange(init);
      if (range) return { bytes: copyBytes(new Uint8Array(range.buffer, range.byteOffset, range.byteLength)), type: null };
      if (isFormData(init)) return encodeMultipart(init as FormData);
      if (isSearchParams(init)) return { bytes: encode(searchParamsToString(init as SearchParams)), type: FORM_TYPE };
    }
    return { bytes: encode(usvString(init)), type: TEXT_TYPE };
  }

  const used = () => new TypeError('Body is unusable: the body has already been read.');
  let bodyOf: (value: Body) => BodyState;
  let isBody: (value: object) => boolean;

  /** The body methods Request and Response share (copied onto each, as the standard's mixin is). */
  class Body {
    readonly #body: BodyState = { bytes: null, used: false };

    static {
      bodyOf = (value) => value.#body;
      isBody = (value) => #body in value;
    }

    get bodyUsed(): boolean {
      return this.#body.used;
    }

    async arrayBuffer(): Promise<ArrayBuffer> {
      return bufferOf(consume(this));
    }

    async bytes(): Promise<Uint8Array> {
      return consume(this);
    }

    async text(): Promise<string> {
      return decode(consume(this));
    }

    async json(): Promise<unknown> {
      return parse(decode(consume(this)));
    }

    async blob(): Promise<Blob> {
      const bytes = consume(this);
      const type = headersOf(this).get('content-type');
      return blobOf(bytes, type === null ? '' : blobType(type));
    }

    async formData(): Promise<FormData> {
      const bytes = consume(this);
      return parseFormData(bytes, headersOf(this).get('content-type'));
    }
  }

  /** A copy of the body's bytes, the body then used; a TypeError when it was used before. */
  function consume(value: Body): Uint8Array {
    if (!isObject(value) || !isBody(value)) throw new TypeError('Illegal invocation: not a Request or Response.');
    const body = bodyOf(value);
    if (body.used) throw used();
    if (body.bytes === null) return new Uint8Array(0);
    body.used = true;
    return copyBytes(body.bytes);
  }

  let headersOf: (value: Body) => Headers;

  // ----- Request -----

  interface RequestState {
    method: string;
    url: string;
    headers: Headers;
    redirect: string;
    /** The signal the request follows (init's or the input request's); its own is made from it when read. */
    source: object | null;
    signal: object | null;
  }
  let requestOf: (value: object) => RequestState | null;

  class Request extends Body {
    readonly #state: RequestState;

    static {
      requestOf = (value) => (#state in value ? (value as Request).#state : null);
    }

    constructor(input: unknown, init: unknown = undefined) {
      requireArguments(arguments.length, 1, 'Request');
      super();
      if (input === TOKEN_KEY) {
        this.#state = init as RequestState;
        return;
      }
      const options = dictionary(init, 'Request init');
      const from = isObject(input) ? requestOf(input) : null;
      let url: string;
      if (from) url = from.url;
      else {
        let parsed: UrlLike;
        try {
          parsed = new URLClass(usvString(input));
        } catch {
          throw new TypeError(`'${usvString(input).slice(0, 200)}' is not a valid absolute URL.`);
        }
        if (parsed.username !== '' || parsed.password !== '') throw new TypeError('A request URL must not include credentials; send an Authorization header instead.');
        url = urlHref(parsed);
      }
      let method = from ? from.method : 'GET';
      if (options?.method !== undefined) {
        method = byteString(options.method);
        if (!test(TOKEN, method)) throw new TypeError(`'${method}' is not a valid HTTP method.`);
        const upper = toUpperCase(method);
        if (includes(FORBIDDEN_METHODS, upper)) throw new TypeError(`The HTTP method ${upper} is not allowed.`);
        if (includes(NORMALIZED_METHODS, upper)) method = upper;
      }
      let redirect = from ? from.redirect : 'follow';
      if (options?.redirect !== undefined) {
        redirect = domString(options.redirect);
        if (!includes(REDIRECT_MODES, redirect)) throw new TypeError(`'${redirect}' is not a redirect mode: 'follow', 'manual' or 'error'.`);
      }
      let source = from ? (from.signal ?? from.source) : null;
      if (options && 'signal' in options) {
        const signal = options.signal;
        if (signal !== undefined && signal !== null && !events.isAbortSignal(signal)) throw new TypeError('The signal must be an AbortSignal.');
        if (signal !== undefined) source = signal as object | null;
      }
      const headers = new Headers(options?.headers !== undefined ? options.headers : from ? from.headers : undefined);
      this.#state = { method, url, headers, redirect, source, signal: null };
      const body = bodyOf(this);
      const given = options?.body;
      const inherited = from && given === undefined ? bodyOf(input as Request) : null;
      if (inherited?.used) throw new TypeError('The request given has already been used: its body was read.');
      if ((given !== undefined && given !== null) || inherited?.bytes) {
        if (method === 'GET' || method === 'HEAD') throw new TypeError('A GET or HEAD request cannot have a body.');
      }
      if (given !== undefined && given !== null) {
        const { bytes, type } = extractBody(given);
        body.bytes = bytes;
        if (type !== null && !headers.has('content-type')) headers.append('content-type', type);
      } else if (inherited?.bytes) {
        body.bytes = inherited.bytes;
        inherited.used = true;
      }
    }

    get method(): string {
      return this.#state.method;
    }

    get url(): string {
      return this.#state.url;
    }

    get headers(): Headers {
      return this.#state.headers;
    }

    get redirect(): string {
      return this.#state.redirect;
    }

    get signal(): object {
      const state = this.#state;
      return (state.signal ??= events.dependentSignal(state.source ? [state.source] : []));
    }

    get cache(): string {
      return 'default';
    }

    get credentials(): string {
      return 'same-origin';
    }

    get mode(): string {
      return 'cors';
    }

    get integrity(): string {
      return '';
    }

    get keepalive(): boolean {
      return false;
    }

    get referrer(): string {
      return 'about:client';
    }

    get referrerPolicy(): string {
      return '';
    }

    get destination(): string {
      return '';
    }

    clone(): Request {
      const body = bodyOf(this);
      if (body.used) throw new TypeError('The request cannot be cloned: its body was read.');
      const state = this.#state;
      const copy = new Request(TOKEN_KEY, { ...state, headers: newHeaders(headerListOf(state.headers), 'none'), source: this.signal, signal: null });
      bodyOf(copy).bytes = body.bytes;
      return copy;
    }
  }

  // ----- Response -----

  interface ResponseState {
    type: string;
    status: number;
    statusText: string;
    headers: Headers;
    url: string;
    redirected: boolean;
  }

  /** A response's state from its init, with its body ("initialize a response"). */
  function initialize(response: Response, init: unknown, body: { bytes: Uint8Array; type: string | null } | null): ResponseState {
    const options = dictionary(init, 'Response init');
    const status = options?.status === undefined ? 200 : +(options.status as number);
    if (!(status >= 200 && status <= 599) || Math.trunc(status) !== status) throw new RangeError(`The status ${String(options?.status)} is not between 200 and 599.`);
    const statusText = options?.statusText === undefined ? '' : byteString(options.statusText);
    if (test(/[\r\n]/, statusText)) throw new TypeError('The status text must not contain CR or LF.');
    const headers = new Headers(options?.headers);
    if (body) {
      if (includes(NULL_BODY_STATUSES, status)) throw new TypeError(`A response with status ${status} cannot have a body.`);
      bodyOf(response).bytes = body.bytes;
      if (body.type !== null && !headers.has('content-type')) headers.append('content-type', body.type);
    }
    return { type: 'default', status, statusText, headers, url: '', redirected: false };
  }

  class Response extends Body {
    #state: ResponseState;

    static {
      headersOf = (value) => {
        if (#state in value) return (value as Response).#state.headers;
        return (requestOf(value) as RequestState).headers;
      };
    }

    constructor(body: unknown = null, init: unknown = undefined) {
      super();
      if (body === TOKEN_KEY) {
        this.#state = init as ResponseState;
        return;
      }
      this.#state = initialize(this, init, body === null || body === undefined ? null : extractBody(body));
    }

    static error(): Response {
      return new Response(TOKEN_KEY, { type: 'error', status: 0, statusText: '', headers: newHeaders(list(), 'immutable'), url: '', redirected: false });
    }

    static redirect(url: unknown, status: unknown = 302): Response {
      requireArguments(arguments.length, 1, 'Response.redirect');
      let location: string;
      try {
        location = urlHref(new URLClass(usvString(url)));
      } catch {
        throw new TypeError(`'${usvString(url).slice(0, 200)}' is not a valid absolute URL.`);
      }
      const code = +(status as number);
      if (!includes(REDIRECT_STATUSES, code)) throw new RangeError(`${String(status)} is not a redirect status (301, 302, 303, 307 or 308).`);
      return new Response(TOKEN_KEY, { type: 'default', status: code, statusText: '', headers: newHeaders([['location', location]], 'immutable'), url: '', redirected: false });
    }

    static json(data: unknown, init: unknown = undefined): Response {
      requireArguments(arguments.length, 1, 'Response.json');
      const text = stringify(data) as string | undefined;
      if (text === undefined) throw new TypeError('The value cannot be converted to JSON.');
      const response = new Response(TOKEN_KEY, null);
      response.#state = initialize(response, init, { bytes: encode(text), type: 'application/json' });
      return response;
    }

    get type(): string {
      return this.#state.type;
    }

    get url(): string {
      return this.#state.url;
    }

    get redirected(): boolean {
      return this.#state.redirected;
    }

    get status(): number {
      return this.#state.status;
    }

    get ok(): boolean {
      return this.#state.status >= 200 && this.#state.status <= 299;
    }

    get statusText(): string {
      return this.#state.statusText;
    }

    get headers(): Headers {
      return this.#state.headers;
    }

    clone(): Response {
      const body = bodyOf(this);
      if (body.used) throw new TypeError('The response cannot be cloned: its body was read.');
      const state = this.#state;
      const guard: Guard = state.type === 'default' ? 'none' : 'immutable';
      const copy = new Response(TOKEN_KEY, { ...state, headers: newHeaders(headerListOf(state.headers), guard) });
      bodyOf(copy).bytes = body.bytes;
      return copy;
    }
  }

  // Request and Response have the body methods themselves, as the standard's mixin gives them.
  for (const Class of [Request, Response]) {
    for (const key of getOwnPropertyNames(Body.prototype)) {
      if (key !== 'constructor') defineProperty(Class.prototype, key, getOwnPropertyDescriptor(Body.prototype, key) as PropertyDescriptor);
    }
    setPrototypeOf(Class.prototype, Object.prototype);
  }

  // ----- fetch -----

  let nextId = 1;

  function fetch(input: unknown, init: unknown = undefined): Promise<Response> {
    return new Promise((resolve, reject) => {
      const request = new Request(input, init);
      const state = requestOf(request) as RequestState;
      const body = bodyOf(request);
      if (body.used) throw new TypeError('The request cannot be sent: its body was read.');
      const signal = state.source;
      if (signal && events.aborted(signal)) throw events.reason(signal);
      const headers: Record<string, string> = create(null) as Record<string, string>;
      const sorted = sortedHeaders(headerListOf(state.headers));
      for (let i = 0; i < sorted.length; i++) headers[sorted[i][0]] = headers[sorted[i][0]] === undefined ? sorted[i][1] : `${headers[sorted[i][0]]}, ${sorted[i][1]}`;
      const wire: Wire = { method: state.method, url: state.url, headers, redirect: state.redirect };
      let bytes: ArrayBuffer | undefined;
      if (body.bytes !== null) {
        if (typedArrayElements(body.bytes) > MAX_REQUEST_BYTES) throw new TypeError(`The request body is larger than 10 MiB, the most one request may send.`);
        bytes = bufferOf(body.bytes);
        body.used = true;
      }
      const id = nextId++;
      const sent = host.send(stringify(wire), bytes, id);
      let settled = false;
      const unfollow = signal
        ? events.addAbortAlgorithm(signal, () => {
            if (settled) return;
            settled = true;
            host.abort(id);
            reject(events.reason(signal));
          })
        : null;
      then(
        sent,
        (text) => {
          if (settled) return;
          settled = true;
          unfollow?.();
          const head = parse(text as string) as Head;
          const response = new Response(TOKEN_KEY, {
            type: 'basic',
            status: head.status,
            statusText: head.statusText,
            headers: newHeaders(head.headers, 'immutable'),
            url: head.url,
            redirected: head.redirected,
          });
          const received = new Uint8Array(host.take(id));
          if (state.method !== 'HEAD' && !includes(NULL_BODY_STATUSES, head.status)) bodyOf(response).bytes = received;
          resolve(response);
        },
        (error) => {
          if (settled) return;
          settled = true;
          unfollow?.();
          reject(error);
        },
      );
    });
  }

  defineInterface(global, 'Headers', Headers);
  defineInterface(global, 'Blob', Blob);
  defineInterface(global, 'File', File);
  defineInterface(global, 'FormData', FormData);
  defineInterface(global, 'Request', Request);
  defineInterface(global, 'Response', Response);
  defineProperty(global, 'fetch', { value: fetch, writable: true, configurable: true, enumerable: true });
  platformClasses.push(
    // File first: a File is a Blob too, and its clone keeps its name.
    { name: 'File', is: (value) => isFile(value), clone: (value) => fileOf(copyBytes(blobBytes(value as File)), (value as File).name, (value as File).type, (value as File).lastModified) },
    { name: 'Blob', is: (value) => isBlob(value), clone: (value) => blobOf(copyBytes(blobBytes(value as Blob)), (value as Blob).type) },
    { name: 'FormData', is: (value) => isFormData(value) },
    { name: 'Headers', is: (value) => isHeaders(value) },
    { name: 'Request', is: (value) => requestOf(value) !== null },
    { name: 'Response', is: (value) => isBody(value) && requestOf(value) === null },
  );
}
