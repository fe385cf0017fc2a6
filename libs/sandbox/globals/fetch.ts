/**
 * `fetch`, `Request`, `Response`, `Headers`, `Blob`, `File` and `FormData` (WHATWG Fetch, File API,
 * XHR's FormData) as Workers-style runtimes have them, without streams: a body is bytes held whole.
 * The host sends the request (libs/sandbox/src/http-exchange.ts, the rules of Context.Http.Request:
 * allowed hosts, the egress guard on every redirect, limits, the run's budget of host calls) and
 * hands the response back whole; everything else lives here.
 */
import type { Global } from './internal/global';
import { usvString } from './internal/global';
import type { Internals } from './internal/internals';
import { byteRange, setBytes, typedArrayBuffer, typedArrayElements, typedArrayOffset } from './internal/bytes';
import { list, uncurry } from './internal/primordials';
import { defineInterface, dictionary, domString, requireArguments } from './internal/webidl';

/** The host functions of this module (libs/sandbox/src/globals/fetch.host.ts). */
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

interface Part {
  name: string;
  filename?: string;
  type?: string;
  start: number;
  end: number;
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

type HeaderList = Array<[string, string]>;
type Guard = 'none' | 'immutable';
type Entry = [string, string | object];

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const INVALID_VALUE = /[\0\r\n]/;
const HTTP_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const FORBIDDEN_METHODS = ['CONNECT', 'TRACE', 'TRACK'];
const NORMALIZED_METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT'];
const REDIRECT_MODES = ['follow', 'manual', 'error'];
const REDIRECT_STATUSES = [301, 302, 303, 307, 308];
const NULL_BODY_STATUSES = [101, 103, 204, 205, 304];
/** The most a request body may hold (RUN_BUDGET.httpRequestBytes); the host checks it again. */
const MAX_REQUEST_BYTES = 10 * 1024 * 1024;
const TEXT_TYPE = 'text/plain;charset=UTF-8';
const FORM_TYPE = 'application/x-www-form-urlencoded;charset=UTF-8';

const { parse, stringify } = JSON;
const { random, floor } = Math;
const { setPrototypeOf, getOwnPropertyNames, getOwnPropertyDescriptor, defineProperty, create } = Object;
const test = uncurry(RegExp.prototype.test);
const replace = uncurry(String.prototype.replace as (pattern: RegExp, replacement: string) => string);
const toLowerCase = uncurry(String.prototype.toLowerCase);
const toUpperCase = uncurry(String.prototype.toUpperCase);
const charCodeAt = uncurry(String.prototype.charCodeAt);
const push = uncurry(Array.prototype.push as (...items: unknown[]) => number);
const splice = uncurry(Array.prototype.splice as (start: number, count: number) => unknown[]);
const sort = uncurry(Array.prototype.sort as (compare: (a: unknown, b: unknown) => number) => unknown[]);
const includes = uncurry(Array.prototype.includes as (value: unknown) => boolean);
const then = uncurry(Promise.prototype.then as (onFulfilled: (value: unknown) => unknown, onRejected: (reason: unknown) => unknown) => Promise<unknown>);
const sliceBuffer = uncurry(ArrayBuffer.prototype.slice);
const iteratorOf = (value: unknown): Iterator<unknown> | null => {
  const method = (value as Record<symbol, unknown>)[Symbol.iterator];
  if (method === undefined || method === null) return null;
  if (typeof method !== 'function') throw new TypeError('The value is not iterable.');
  return (method as () => Iterator<unknown>).call(value);
};
const isObject = (value: unknown): value is object => (typeof value === 'object' && value !== null) || typeof value === 'function';

/** A copy of some bytes, in a buffer of their own. */
function copyBytes(bytes: Uint8Array, start = 0, end = typedArrayElements(bytes)): Uint8Array {
  const copy = new Uint8Array(end - start);
  if (end > start) setBytes(copy, new Uint8Array(typedArrayBuffer(bytes), typedArrayOffset(bytes) + start, end - start));
  return copy;
}

/** An ArrayBuffer of exactly these bytes (the one they are in when they fill it, else a copy). */
function bufferOf(bytes: Uint8Array): ArrayBuffer {
  const buffer = typedArrayBuffer(bytes) as ArrayBuffer;
  const offset = typedArrayOffset(bytes);
  const length = typedArrayElements(bytes);
  return offset === 0 && length === buffer.byteLength ? buffer : sliceBuffer(buffer, offset, offset + length);
}

function concatBytes(parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (let i = 0; i < parts.length; i++) size += typedArrayElements(parts[i]);
  const joined = new Uint8Array(size);
  let at = 0;
  for (let i = 0; i < parts.length; i++) {
    setBytes(joined, parts[i], at);
    at += typedArrayElements(parts[i]);
  }
  return joined;
}

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

  // ----- Headers -----

  let headerListOf: (headers: Headers) => HeaderList;
  let isHeaders: (value: object) => boolean;
  let setGuard: (headers: Headers, guard: Guard) => void;

  const headerName = (name: unknown): string => {
    const text = domString(name);
    if (!test(TOKEN, text)) throw new TypeError(`'${text}' is not a valid HTTP header name.`);
    return toLowerCase(text);
  };
  const headerValue = (value: unknown): string => {
    const text = replace(byteString(value), HTTP_WHITESPACE, '');
    if (test(INVALID_VALUE, text)) throw new TypeError('A header value must not contain NUL, CR or LF.');
    return text;
  };

  class Headers {
    readonly #list: HeaderList = list();
    #guard: Guard = 'none';

    static {
      headerListOf = (headers) => headers.#list;
      isHeaders = (value) => #list in value;
      setGuard = (headers, guard) => {
        headers.#guard = guard;
      };
    }

    constructor(init: unknown = undefined) {
      if (init !== undefined) fillHeaders(this, init);
    }

    append(name: unknown, value: unknown): void {
      requireArguments(arguments.length, 2, "Headers.append");
      const entry: [string, string] = [headerName(name), headerValue(value)];
      this.#writable();
      push(this.#list, entry);
    }

    delete(name: unknown): void {
      requireArguments(arguments.length, 1, 'Headers.delete');
      const key = headerName(name);
      this.#writable();
      for (let i = this.#list.length - 1; i >= 0; i--) if (this.#list[i][0] === key) splice(this.#list, i, 1);
    }

    get(name: unknown): string | null {
      requireArguments(arguments.length, 1, 'Headers.get');
      const key = headerName(name);
      let found: string | null = null;
      for (let i = 0; i < this.#list.length; i++) if (this.#list[i][0] === key) found = found === null ? this.#list[i][1] : `${found}, ${this.#list[i][1]}`;
      return found;
    }

    getSetCookie(): string[] {
      const cookies: string[] = [];
      for (let i = 0; i < this.#list.length; i++) if (this.#list[i][0] === 'set-cookie') push(cookies, this.#list[i][1]);
      return cookies;
    }

    has(name: unknown): boolean {
      requireArguments(arguments.length, 1, 'Headers.has');
      const key = headerName(name);
      for (let i = 0; i < this.#list.length; i++) if (this.#list[i][0] === key) return true;
      return false;
    }

    set(name: unknown, value: unknown): void {
      requireArguments(arguments.length, 2, 'Headers.set');
      const key = headerName(name);
      const text = headerValue(value);
      this.#writable();
      let replaced = false;
      for (let i = 0; i < this.#list.length; i++) {
        if (this.#list[i][0] !== key) continue;
        if (replaced) splice(this.#list, i--, 1);
        else {
          this.#list[i] = [key, text];
          replaced = true;
        }
      }
      if (!replaced) push(this.#list, [key, text]);
    }

    forEach(callback: unknown, thisArg: unknown = undefined): void {
      requireArguments(arguments.length, 1, 'Headers.forEach');
      if (typeof callback !== 'function') throw new TypeError('Headers.forEach: the callback is not a function.');
      const sorted = sortedHeaders(this.#list);
      for (let i = 0; i < sorted.length; i++) callback.call(thisArg, sorted[i][1], sorted[i][0], this);
    }

    *entries(): IterableIterator<[string, string]> {
      const sorted = sortedHeaders(this.#list);
      for (let i = 0; i < sorted.length; i++) yield [sorted[i][0], sorted[i][1]];
    }

    *keys(): IterableIterator<string> {
      const sorted = sortedHeaders(this.#list);
      for (let i = 0; i < sorted.length; i++) yield sorted[i][0];
    }

    *values(): IterableIterator<string> {
      const sorted = sortedHeaders(this.#list);
      for (let i = 0; i < sorted.length; i++) yield sorted[i][1];
    }

    #writable(): void {
      if (this.#guard === 'immutable') throw new TypeError('These headers are immutable.');
    }
  }
  defineProperty(Headers.prototype, Symbol.iterator, { value: Headers.prototype.entries, writable: true, configurable: true });

  /** "Sort and combine": by name, values of a name joined with ", ", every set-cookie on its own. */
  function sortedHeaders(headers: HeaderList): HeaderList {
    const names: string[] = list();
    for (let i = 0; i < headers.length; i++) if (!includes(names, headers[i][0])) push(names, headers[i][0]);
    sort(names, (a, b) => ((a as string) < (b as string) ? -1 : 1));
    const sorted: HeaderList = list();
    for (let n = 0; n < names.length; n++) {
      const name = names[n];
      let combined: string | null = null;
      for (let i = 0; i < headers.length; i++) {
        if (headers[i][0] !== name) continue;
        if (name === 'set-cookie') push(sorted, [name, headers[i][1]]);
        else combined = combined === null ? headers[i][1] : `${combined}, ${headers[i][1]}`;
      }
      if (combined !== null) push(sorted, [name, combined]);
    }
    return sorted;
  }

  function fillHeaders(headers: Headers, init: unknown): void {
    if (!isObject(init)) throw new TypeError('Headers can be made from an object, an array of [name, value] pairs or a Headers object.');
    const target = headerListOf(headers);
    if (isHeaders(init)) {
      const source = headerListOf(init as Headers);
      for (let i = 0; i < source.length; i++) push(target, [source[i][0], source[i][1]]);
      return;
    }
    const pairs = iteratorOf(init);
    if (pairs) {
      for (let step = pairs.next(); !step.done; step = pairs.next()) {
        const pair = step.value;
        const items: unknown[] = [];
        const inner = isObject(pair) ? iteratorOf(pair) : null;
        if (!inner) throw new TypeError('Each header must be a [name, value] pair.');
        for (let item = inner.next(); !item.done; item = inner.next()) push(items, item.value);
        if (items.length !== 2) throw new TypeError('Each header must be a [name, value] pair.');
        push(target, [headerName(items[0]), headerValue(items[1])]);
      }
      return;
    }
    const record = init as Record<string, unknown>;
    for (const key of Reflect.ownKeys(record)) {
      if (typeof key === 'symbol') continue;
      if (!getOwnPropertyDescriptor(record, key)?.enumerable) continue;
      push(target, [headerName(key), headerValue(record[key])]);
    }
  }

  /** WebIDL ByteString: code units above 0xFF are a TypeError. */
  function byteString(value: unknown): string {
    const text = domString(value);
    for (let i = 0; i < text.length; i++) if (charCodeAt(text, i) > 0xff) throw new TypeError(`A header value may hold only Latin-1 characters (found U+${charCodeAt(text, i).toString(16).toUpperCase()}).`);
    return text;
  }

  const newHeaders = (entries: HeaderList, guard: Guard): Headers => {
    const headers = new Headers();
    const target = headerListOf(headers);
    for (let i = 0; i < entries.length; i++) push(target, [entries[i][0], entries[i][1]]);
    setGuard(headers, guard);
    return headers;
  };

  // ----- Blob, File -----

  let blobBytes: (blob: Blob) => Uint8Array;
  /** Gives a Blob made here bytes already copied (not copied again). */
  let setBlobBytes: (blob: Blob, bytes: Uint8Array) => void;
  let isBlob: (value: object) => boolean;

  /** The `type` a Blob keeps: lower case, or '' when it has characters outside U+0020-U+007E. */
  const blobType = (value: unknown): string => {
    const text = domString(value);
    for (let i = 0; i < text.length; i++) {
      const c = charCodeAt(text, i);
      if (c < 0x20 || c > 0x7e) return '';
    }
    return toLowerCase(text);
  };

  class Blob {
    #bytes: Uint8Array;
    readonly #type: string;

    static {
      blobBytes = (blob) => blob.#bytes;
      setBlobBytes = (blob, bytes) => {
        blob.#bytes = bytes;
      };
      isBlob = (value) => #bytes in value;
    }

    constructor(parts: unknown = undefined, options: unknown = undefined) {
      const init = dictionary(options, 'Blob options');
      const chunks: Uint8Array[] = list();
      if (parts !== undefined) {
        const items = isObject(parts) ? iteratorOf(parts) : null;
        if (!items) throw new TypeError('Blob parts must be an array (or other iterable) of strings, buffers and Blobs.');
        const native = init?.endings !== undefined && domString(init.endings) === 'native';
        for (let step = items.next(); !step.done; step = items.next()) {
          const part = step.value;
          if (isObject(part) && isBlob(part)) push(chunks, (part as Blob).#bytes);
          else {
            const range = byteRange(part);
            if (range) push(chunks, copyBytes(new Uint8Array(range.buffer, range.byteOffset, range.byteLength)));
            else push(chunks, encode(native ? replace(usvString(part), /\r\n|\r/g, '\n') : usvString(part)));
          }
        }
      }
      this.#bytes = chunks.length === 1 ? chunks[0] : concatBytes(chunks);
      this.#type = init?.type === undefined ? '' : blobType(init.type);
    }

    get size(): number {
      return typedArrayElements(this.#bytes);
    }

    get type(): string {
      return this.#type;
    }

    slice(start: unknown = undefined, end: unknown = undefined, contentType: unknown = undefined): Blob {
      const size = typedArrayElements(this.#bytes);
      const clamp = (value: unknown, fallback: number) => {
        if (value === undefined) return fallback;
        const n = Math.trunc(+(value as number)) || 0;
        return n < 0 ? Math.max(size + n, 0) : Math.min(n, size);
      };
      const from = clamp(start, 0);
      const to = Math.max(clamp(end, size), from);
      const blob = new Blob(undefined, contentType === undefined ? undefined : { type: contentType });
      blob.#bytes = copyBytes(this.#bytes, from, to);
      return blob;
    }

    async text(): Promise<string> {
      return decode(this.#bytes);
    }

    async arrayBuffer(): Promise<ArrayBuffer> {
      return bufferOf(copyBytes(this.#bytes));
    }

    async bytes(): Promise<Uint8Array> {
      return copyBytes(this.#bytes);
    }
  }

  let isFile: (value: object) => boolean;

  class File extends Blob {
    readonly #name: string;
    readonly #lastModified: number;

    static {
      isFile = (value) => #name in value;
    }

    constructor(bits: unknown, name: unknown, options: unknown = undefined) {
      requireArguments(arguments.length, 2, 'File');
      super(bits, options);
      this.#name = usvString(name);
      const init = dictionary(options, 'File options');
      this.#lastModified = init?.lastModified === undefined ? Date.now() : Math.trunc(+(init.lastModified as number)) || 0;
    }

    get name(): string {
      return this.#name;
    }

    get lastModified(): number {
      return this.#lastModified;
    }
  }

  const blobOf = (bytes: Uint8Array, type: string): Blob => {
    const blob = new Blob(undefined, { type });
    setBlobBytes(blob, bytes);
    return blob;
  };
  const fileOf = (bytes: Uint8Array, name: string, type: string, lastModified?: number): File => {
    const file = new File([], name, lastModified === undefined ? { type } : { type, lastModified });
    setBlobBytes(file, bytes);
    return file;
  };

  // ----- FormData -----

  let entriesOf: (form: FormData) => Entry[];
  let isFormData: (value: object) => boolean;

  /** A FormData entry's value: a string, or a File (a Blob becomes one named "blob", or `filename`). */
  const entryValue = (value: unknown, filename: unknown, given: number): string | object => {
    if (isObject(value) && isBlob(value)) {
      const blob = value as Blob;
      if (given < 3 && isFile(blob)) return blob;
      const name = given >= 3 ? usvString(filename) : 'blob';
      return fileOf(blobBytes(blob), name, blob.type, isFile(blob) ? (blob as File).lastModified : undefined);
    }
    if (given >= 3) throw new TypeError('FormData: a file name is given only with a Blob value.');
    return usvString(value);
  };

  class FormData {
    readonly #entries: Entry[] = list();

    static {
      entriesOf = (form) => form.#entries;
      isFormData = (value) => #entries in value;
    }

    constructor(form: unknown = undefined) {
      if (form !== undefined) throw new TypeError('FormData: there are no HTML forms here; make it empty and append entries.');
    }

    append(name: unknown, value: unknown, filename: unknown = undefined): void {
      requireArguments(arguments.length, 2, 'FormData.append');
      push(this.#entries, [usvString(name), entryValue(value, filename, arguments.length)]);
    }

    delete(name: unknown): void {
      requireArguments(arguments.length, 1, 'FormData.delete');
      const key = usvString(name);
      for (let i = this.#entries.length - 1; i >= 0; i--) if (this.#entries[i][0] === key) splice(this.#entries, i, 1);
    }

    get(name: unknown): string | object | null {
      requireArguments(arguments.length, 1, 'FormData.get');
      const key = usvString(name);
      for (let i = 0; i < this.#entries.length; i++) if (this.#entries[i][0] === key) return this.#entries[i][1];
      return null;
    }

    getAll(name: unknown): Array<string | object> {
      requireArguments(arguments.length, 1, 'FormData.getAll');
      const key = usvString(name);
      const found: Array<string | object> = [];
      for (let i = 0; i < this.#entries.length; i++) if (this.#entries[i][0] === key) push(found, this.#entries[i][1]);
      return found;
    }

    has(name: unknown): boolean {
      requireArguments(arguments.length, 1, 'FormData.has');
      const key = usvString(name);
      for (let i = 0; i < this.#entries.length; i++) if (this.#entries[i][0] === key) return true;
      return false;
    }

    set(name: unknown, value: unknown, filename: unknown = undefined): void {
      requireArguments(arguments.length, 2, 'FormData.set');
      const key = usvString(name);
      const entry: Entry = [key, entryValue(value, filename, arguments.length)];
      let replaced = false;
      for (let i = 0; i < this.#entries.length; i++) {
        if (this.#entries[i][0] !== key) continue;
        if (replaced) splice(this.#entries, i--, 1);
        else {
          this.#entries[i] = entry;
          replaced = true;
        }
      }
      if (!replaced) push(this.#entries, entry);
    }

    forEach(callback: unknown, thisArg: unknown = undefined): void {
      requireArguments(arguments.length, 1, 'FormData.forEach');
      if (typeof callback !== 'function') throw new TypeError('FormData.forEach: the callback is not a function.');
      for (let i = 0; i < this.#entries.length; i++) callback.call(thisArg, this.#entries[i][1], this.#entries[i][0], this);
    }

    *entries(): IterableIterator<[string, string | object]> {
      for (let i = 0; i < this.#entries.length; i++) yield [this.#entries[i][0], this.#entries[i][1]];
    }

    *keys(): IterableIterator<string> {
      for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i][0];
    }

    *values(): IterableIterator<string | object> {
      for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i][1];
    }
  }
  defineProperty(FormData.prototype, Symbol.iterator, { value: FormData.prototype.entries, writable: true, configurable: true });

  /** multipart/form-data as the HTML standard encodes it: names escaped, line breaks of string values as CRLF. */
  function encodeMultipart(form: FormData): { bytes: Uint8Array; type: string } {
    let boundary = '----formdata-';
    for (let i = 0; i < 24; i++) boundary += '0123456789abcdef'[floor(random() * 16)];
    const escape = (text: string) => replace(replace(replace(text, /\n/g, '%0A'), /\r/g, '%0D'), /"/g, '%22');
    const parts: Uint8Array[] = list();
    const entries = entriesOf(form);
    for (let i = 0; i < entries.length; i++) {
      const [name, value] = entries[i];
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escape(replace(name, /\r\n|\r|\n/g, '\r\n'))}"`;
      if (typeof value === 'string') {
        push(parts, encode(`${head}\r\n\r\n${replace(value, /\r\n|\r|\n/g, '\r\n')}\r\n`));
      } else {
        const file = value as File;
        head += `; filename="${escape(file.name)}"\r\nContent-Type: ${file.type || 'application/octet-stream'}\r\n\r\n`;
        push(parts, encode(head), blobBytes(file), encode('\r\n'));
      }
    }
    push(parts, encode(`--${boundary}--\r\n`));
    return { bytes: concatBytes(parts), type: `multipart/form-data; boundary=${boundary}` };
  }

  /** Reads a body as form data: multipart/form-data or application/x-www-form-urlencoded, by its Content-Type. */
  function parseFormData(bytes: Uint8Array, contentType: string | null): FormData {
    const type = toLowerCase(contentType ?? '');
    const form = new FormData();
    const entries = entriesOf(form);
    if (test(/^\s*multipart\/form-data\s*;/, type)) {
      const parts = parse(host.multipart(bufferOf(bytes), contentType as string)) as Part[];
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i];
        const data = copyBytes(bytes, part.start, part.end);
        push(entries, [part.name, part.filename === undefined ? decode(data) : fileOf(data, part.filename, part.type ?? '')]);
      }
      return form;
    }
    if (test(/^\s*application\/x-www-form-urlencoded\s*(;|$)/, type)) {
      const params = new URLSearchParamsClass(decode(bytes));
      params.forEach((value, name) => push(entries, [name, value]));
      return form;
    }
    throw new TypeError(`The body cannot be read as form data: its Content-Type is ${contentType === null ? 'missing' : `'${contentType}'`}, not multipart/form-data or application/x-www-form-urlencoded.`);
  }

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
