/** `Blob` and `File` (W3C File API): bytes with a type, held whole; no streams. */
import { usvString } from '../internal/global';
import { list } from '../internal/primordials';
import { dictionary, domString, requireArguments } from '../internal/webidl';
import { byteRange, charCodeAt, concatBytes, copyBytes, bufferOf, isObject, iteratorOf, push, replace, toLowerCase, typedArrayElements } from './common';

/** The Blob and File classes of one sandbox; `encode` and `decode` are UTF-8, done by the host. */
export function blobClasses(encode: (text: string) => Uint8Array, decode: (bytes: Uint8Array) => string) {

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

  return { Blob, File, blobBytes, isBlob, isFile, blobOf, fileOf, blobType };
}
