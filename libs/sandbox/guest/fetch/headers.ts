/** `Headers` (WHATWG Fetch): names case-insensitive, kept in order, read back sorted and combined. */
import { list } from '../internal/primordials';
import { domString, requireArguments } from '../internal/webidl';
import { byteString, defineProperty, getOwnPropertyDescriptor, HTTP_WHITESPACE, includes, INVALID_VALUE, isObject, iteratorOf, push, replace, sort, splice, test, toLowerCase, TOKEN, type Guard, type HeaderList } from './common';

/** The Headers class of one sandbox, and what the other parts need of its objects. */
export function headersClass() {

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

  const newHeaders = (entries: HeaderList, guard: Guard): Headers => {
    const headers = new Headers();
    const target = headerListOf(headers);
    for (let i = 0; i < entries.length; i++) push(target, [entries[i][0], entries[i][1]]);
    setGuard(headers, guard);
    return headers;
  };

  return { Headers, headerListOf, isHeaders, newHeaders, sortedHeaders };
}
