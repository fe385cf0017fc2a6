/** `FormData` (XHR): entries sent as multipart/form-data, and read back from multipart or urlencoded bodies. */
import { usvString } from '../internal/global';
import { list } from '../internal/primordials';
import { requireArguments } from '../internal/webidl';
import type { blobClasses } from './blob';
import { bufferOf, concatBytes, copyBytes, defineProperty, floor, isObject, parse, push, random, replace, splice, test, toLowerCase, type Entry } from './common';

/** A part of a multipart body, as the host finds it (libs/sandbox/src/host/fetch.host.ts). */
interface Part {
  name: string;
  filename?: string;
  type?: string;
  start: number;
  end: number;
}

/** What FormData needs: the Blob classes, UTF-8 by the host, the host's multipart parser, URLSearchParams. */
export interface FormDataNeeds {
  blobs: ReturnType<typeof blobClasses>;
  encode(text: string): Uint8Array;
  decode(bytes: Uint8Array): string;
  multipart(bytes: ArrayBuffer, contentType: string): string;
  URLSearchParams: new (init: string) => { forEach(callback: (value: string, name: string) => void): void };
}

/** The FormData class of one sandbox, and the encoding and parsing of its bodies. */
export function formDataClass({ blobs, encode, decode, multipart, URLSearchParams: URLSearchParamsClass }: FormDataNeeds) {
  const { isBlob, isFile, fileOf, blobBytes } = blobs;
  type Blob = InstanceType<typeof blobs.Blob>;
  type File = InstanceType<typeof blobs.File>;

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
      const parts = parse(multipart(bufferOf(bytes), contentType as string)) as Part[];
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

  return { FormData, entriesOf, isFormData, encodeMultipart, parseFormData };
}
