/**
 * `URL` and `URLSearchParams` with WHATWG behaviour. Parsing and serialising are the host's (Node's
 * own WHATWG URL implementation), so every corner of the standard (IDNA, IPv6, percent-encoding,
 * special schemes) behaves exactly as in Node, browsers and Workers; the objects and their methods
 * live here.
 */
import type { Global } from './internal/global';
import { defineGlobal, usvString } from './internal/global';
import type { Internals } from './internal/internals';

/** A parsed URL: what `URL`'s getters return. */
interface UrlRecord {
  href: string;
  origin: string;
  protocol: string;
  username: string;
  password: string;
  host: string;
  hostname: string;
  port: string;
  pathname: string;
  search: string;
  hash: string;
}

type Pair = [string, string];

/** The host functions of this module (libs/sandbox/src/host/url.host.ts). */
interface UrlHost {
  /** The URL parsed against `base`; null when it is not a valid URL. */
  parse(input: string, base: string | undefined): UrlRecord | null;
  /** The URL after setting one of its parts, as `URL`'s setters do. */
  update(href: string, part: string, value: string): UrlRecord;
  /** `application/x-www-form-urlencoded` parsing. */
  parseQuery(query: string): Pair[];
  serializeQuery(pairs: Pair[]): string;
}

const SETTABLE = ['protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash'] as const;

export default function install(host: UrlHost, global: Global, internals: Internals): void {
  let paramsOf: (url: URL) => URLSearchParams | null;
  let replaceList: (params: URLSearchParams, query: string) => void;
  let linkParams: (params: URLSearchParams, url: URL) => void;
  let setRecord: (url: URL, record: UrlRecord) => void;
  let recordOf: (url: URL) => UrlRecord;

  class URLSearchParams {
    #list: Pair[] = [];
    #url: URL | null = null;

    static {
      internals.core.platformClasses.push({ name: 'URLSearchParams', is: (value) => #list in value });
      replaceList = (params, query) => {
        params.#list = query === '' ? [] : host.parseQuery(query);
      };
      linkParams = (params, url) => {
        params.#url = url;
      };
    }

    constructor(init: unknown = undefined) {
      if (init === undefined || init === null) return;
      if (typeof init === 'object' || typeof init === 'function') {
        const iterator = (init as { [Symbol.iterator]?: unknown })[Symbol.iterator];
        if (iterator !== undefined) {
          if (typeof iterator !== 'function') throw new TypeError("URLSearchParams: the init value's Symbol.iterator is not a function.");
          for (const pair of init as Iterable<unknown>) {
            if ((typeof pair !== 'object' && typeof pair !== 'function') || pair === null) throw new TypeError('URLSearchParams: each pair must be a sequence of a name and a value.');
            const items = [...(pair as Iterable<unknown>)];
            if (items.length !== 2) throw new TypeError('URLSearchParams: each pair must have exactly two items, a name and a value.');
            this.#list.push([usvString(items[0]), usvString(items[1])]);
          }
          return;
        }
        for (const key of Reflect.ownKeys(init as object)) {
          if (typeof key !== 'string' || !Object.prototype.propertyIsEnumerable.call(init, key)) continue;
          this.#list.push([usvString(key), usvString((init as Record<string, unknown>)[key])]);
        }
        return;
      }
      const text = usvString(init);
      replaceList(this, text.startsWith('?') ? text.slice(1) : text);
    }

    get size(): number {
      return this.#list.length;
    }

    append(name: unknown, value: unknown): void {
      this.#list.push([usvString(name), usvString(value)]);
      this.#update();
    }

    delete(name: unknown, value: unknown = undefined): void {
      const key = usvString(name);
      const only = value === undefined ? undefined : usvString(value);
      this.#list = this.#list.filter(([n, v]) => n !== key || (only !== undefined && v !== only));
      this.#update();
    }

    get(name: unknown): string | null {
      const key = usvString(name);
      return this.#list.find(([n]) => n === key)?.[1] ?? null;
    }

    getAll(name: unknown): string[] {
      const key = usvString(name);
      return this.#list.filter(([n]) => n === key).map(([, v]) => v);
    }

    has(name: unknown, value: unknown = undefined): boolean {
      const key = usvString(name);
      const only = value === undefined ? undefined : usvString(value);
      return this.#list.some(([n, v]) => n === key && (only === undefined || v === only));
    }

    set(name: unknown, value: unknown): void {
      const key = usvString(name);
      const text = usvString(value);
      const first = this.#list.findIndex(([n]) => n === key);
      if (first === -1) this.#list.push([key, text]);
      else this.#list = this.#list.filter(([n], i) => i === first || n !== key).map((pair, i) => (i === first ? [key, text] : pair));
      this.#update();
    }

    /** Stable sort by name, comparing UTF-16 code units as the standard says. */
    sort(): void {
      this.#list = this.#list
        .map((pair, index) => ({ pair, index }))
        .sort((a, b) => (a.pair[0] < b.pair[0] ? -1 : a.pair[0] > b.pair[0] ? 1 : a.index - b.index))
        .map(({ pair }) => pair);
      this.#update();
    }

    forEach(callback: (value: string, name: string, params: URLSearchParams) => void, thisArg: unknown = undefined): void {
      if (typeof callback !== 'function') throw new TypeError('URLSearchParams.forEach expects a function.');
      for (let i = 0; i < this.#list.length; i++) callback.call(thisArg, this.#list[i][1], this.#list[i][0], this);
    }

    *entries(): IterableIterator<Pair> {
      for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]];
    }

    *keys(): IterableIterator<string> {
      for (let i = 0; i < this.#list.length; i++) yield this.#list[i][0];
    }

    *values(): IterableIterator<string> {
      for (let i = 0; i < this.#list.length; i++) yield this.#list[i][1];
    }

    [Symbol.iterator](): IterableIterator<Pair> {
      return this.entries();
    }

    toString(): string {
      return this.#list.length === 0 ? '' : host.serializeQuery(this.#list);
    }

    get [Symbol.toStringTag](): string {
      return 'URLSearchParams';
    }

    /** A change to the list of a URL's `searchParams` changes that URL's query. */
    #update(): void {
      const url = this.#url;
      if (url) setRecord(url, host.update(recordOf(url).href, 'search', this.toString()));
    }
  }

  class URL {
    #record: UrlRecord;
    #params: URLSearchParams | null = null;

    static {
      internals.core.platformClasses.push({ name: 'URL', is: (value) => #record in value });
      paramsOf = (url) => url.#params;
      setRecord = (url, record) => {
        url.#record = record;
      };
      recordOf = (url) => url.#record;
    }

    constructor(url: unknown, base: unknown = undefined) {
      const input = usvString(url);
      const record = host.parse(input, base === undefined ? undefined : usvString(base));
      if (!record) throw new TypeError(`Invalid URL: ${input.length > 200 ? `${input.slice(0, 200)}...` : input}`);
      this.#record = record;
    }

    static canParse(url: unknown, base: unknown = undefined): boolean {
      return host.parse(usvString(url), base === undefined ? undefined : usvString(base)) !== null;
    }

    static parse(url: unknown, base: unknown = undefined): URL | null {
      return URL.canParse(url, base) ? new URL(url, base) : null;
    }

    get href(): string {
      return this.#record.href;
    }

    set href(value: unknown) {
      const input = usvString(value);
      const record = host.parse(input, undefined);
      if (!record) throw new TypeError(`Invalid URL: ${input.slice(0, 200)}`);
      this.#record = record;
      this.#refreshParams();
    }

    get origin(): string {
      return this.#record.origin;
    }

    get searchParams(): URLSearchParams {
      if (!this.#params) {
        const params = new URLSearchParams(this.#record.search);
        linkParams(params, this);
        this.#params = params;
      }
      return this.#params;
    }

    toString(): string {
      return this.#record.href;
    }

    toJSON(): string {
      return this.#record.href;
    }

    get [Symbol.toStringTag](): string {
      return 'URL';
    }

    /** After the query changed by other means, the `searchParams` object shows the new one. */
    #refreshParams(): void {
      const params = paramsOf(this);
      if (params) replaceList(params, this.#record.search.slice(1));
    }

    static {
      for (const part of SETTABLE) {
        Object.defineProperty(URL.prototype, part, {
          configurable: true,
          enumerable: true,
          get(this: URL) {
            return recordOf(this)[part];
          },
          set(this: URL, value: unknown) {
            setRecord(this, host.update(recordOf(this).href, part, usvString(value)));
            if (part === 'search') this.#refreshParams();
          },
        });
      }
    }
  }

  defineGlobal(global, 'URL', URL);
  defineGlobal(global, 'URLSearchParams', URLSearchParams);
}
