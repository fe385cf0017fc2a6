/**
 * `TextEncoder` and `TextDecoder` (WHATWG Encoding). The bytes are converted by the host: UTF-8 at
 * native speed, and every label and legacy encoding Node's ICU knows; the objects, argument checks
 * and errors live here. A decoder streaming with `{ stream: true }` keeps its state on the host, per
 * run.
 */
import type { Global } from './internal/global';
import { usvString } from './internal/global';
import type { Internals } from './internal/internals';
import { byteRange, hostBuffer, setBytes, typedArrayElements, typedArrayName, type ByteRange } from './internal/bytes';
import { MAX_UNITS_PER_CALL, tooLarge } from './internal/limits';
import { uncurry } from './internal/primordials';
import { defineInterface, dictionary, domString, requireArguments } from './internal/webidl';

/** The host functions of this module (libs/sandbox/src/host/encoding.host.ts). */
interface EncodingHost {
  /** The UTF-8 bytes of a well-formed string. */
  encode(text: string): ArrayBuffer;
  /** How many UTF-16 code units of `text`, whole code points only, fit in `capacity` UTF-8 bytes. */
  fit(text: string, capacity: number): number;
  /** The name of the encoding a label stands for; null when there is none. */
  encodingOf(label: string): string | null;
  /** Decodes bytes; with `stream`, the host keeps the decoder `id`'s state for its next call. */
  decode(bytes: ArrayBuffer, encoding: string, fatal: boolean, ignoreBOM: boolean, stream: boolean, id: number): string;
}

/** Labels are short ("unicode-1-1-utf-8" is the longest); anything longer names no encoding. */
const MAX_LABEL = 64;
const NO_BYTES = new ArrayBuffer(0);
const slice = uncurry(String.prototype.slice);
const charCodeAt = uncurry(String.prototype.charCodeAt);

export default function install(host: EncodingHost, global: Global, internals: Internals): void {
  const checkLength = (text: string, what: string) => {
    if (text.length > MAX_UNITS_PER_CALL) throw new RangeError(tooLarge(what, 'characters', 'encode the text in parts'));
    return text;
  };

  let isTextEncoder: (value: object) => boolean;
  let isTextDecoder: (value: object) => boolean;
  let nextDecoder = 1;

  class TextEncoder {
    readonly #brand = true;

    static {
      isTextEncoder = (value) => #brand in value;
    }

    get encoding(): string {
      return 'utf-8';
    }

    encode(input: unknown = ''): Uint8Array {
      return new Uint8Array(host.encode(checkLength(usvString(input), 'TextEncoder.encode')));
    }

    encodeInto(source: unknown, destination: unknown): { read: number; written: number } {
      requireArguments(arguments.length, 2, 'TextEncoder.encodeInto');
      const text = usvString(source);
      if (typedArrayName(destination) !== 'Uint8Array') throw new TypeError('TextEncoder.encodeInto: the destination must be a Uint8Array.');
      const capacity = typedArrayElements(destination);
      // Each code unit takes one byte at least: no more than `capacity` of them can fit. A pair cut
      // in two at the end could not fit either (it needs four bytes).
      let part = checkLength(text.length > capacity ? slice(text, 0, capacity) : text, 'TextEncoder.encodeInto');
      const last = charCodeAt(part, part.length - 1);
      if (part.length < text.length && last >= 0xd800 && last <= 0xdbff) part = slice(part, 0, -1);
      // A code unit takes three bytes at most: below that, everything fits without asking the host.
      if (part.length * 3 > capacity) part = slice(part, 0, host.fit(part, capacity));
      const bytes = new Uint8Array(host.encode(part));
      setBytes(destination, bytes);
      return { read: part.length, written: typedArrayElements(bytes) };
    }
  }

  class TextDecoder {
    readonly #encoding: string;
    readonly #fatal: boolean;
    readonly #ignoreBOM: boolean;
    readonly #id = nextDecoder++;

    static {
      isTextDecoder = (value) => #id in value;
    }

    constructor(label: unknown = 'utf-8', options: unknown = undefined) {
      const name = domString(label);
      const init = dictionary(options, 'TextDecoder options');
      this.#fatal = Boolean(init?.fatal);
      this.#ignoreBOM = Boolean(init?.ignoreBOM);
      // The default needs no look-up on the host.
      const encoding = name === 'utf-8' ? name : name.length > MAX_LABEL ? null : host.encodingOf(name);
      if (encoding === null) throw new RangeError(`The "${slice(name, 0, MAX_LABEL)}" encoding is not supported.`);
      this.#encoding = encoding;
    }

    get encoding(): string {
      return this.#encoding;
    }

    get fatal(): boolean {
      return this.#fatal;
    }

    get ignoreBOM(): boolean {
      return this.#ignoreBOM;
    }

    decode(input: unknown = undefined, options: unknown = undefined): string {
      let range: ByteRange | null = null;
      if (input !== undefined) {
        range = byteRange(input);
        if (!range) throw new TypeError('TextDecoder.decode: the input must be an ArrayBuffer, a typed array or a DataView.');
      }
      const stream = Boolean(dictionary(options, 'TextDecoder.decode options')?.stream);
      // The bytes are read after the options, as the standard says (a getter may change them).
      if (range && range.byteLength > MAX_UNITS_PER_CALL) throw new RangeError(tooLarge('TextDecoder.decode', 'bytes', 'decode larger inputs in parts with { stream: true }'));
      return host.decode(range ? hostBuffer(range) : NO_BYTES, this.#encoding, this.#fatal, this.#ignoreBOM, stream, this.#id);
    }
  }

  defineInterface(global, 'TextEncoder', TextEncoder);
  defineInterface(global, 'TextDecoder', TextDecoder);
  internals.core.platformClasses.push(
    { name: 'TextEncoder', is: (value) => isTextEncoder(value) },
    { name: 'TextDecoder', is: (value) => isTextDecoder(value) },
  );
}
