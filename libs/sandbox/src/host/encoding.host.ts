import { MAX_UNITS_PER_CALL, tooLarge } from '../../guest/internal/limits';
import { SandboxError, type GlobalsModule, type HostRun } from './host-module';

/** Decoders a run may have in the middle of a stream at once; one more ends the run (streams left unfinished in a loop are a bug). */
export const MAX_STREAMS = 1000;

interface Decoder {
  decode(bytes: Uint8Array, options: { stream: boolean }): string;
}

const utf8 = new TextEncoder();

/** `TextEncoder` and `TextDecoder`: UTF-8 by Node's encoder, decoding by Node's TextDecoder (ICU) except windows-1252. */
export const encodingModule: GlobalsModule = {
  name: 'encoding',
  globals: ['TextEncoder', 'TextDecoder'],
  functions: {
    encode: (_run, text) => utf8.encode(checkedText(text, 'TextEncoder.encode')),
    fit(_run, text, capacity) {
      const units = checkedText(text, 'TextEncoder.encodeInto');
      if (typeof capacity !== 'number' || !(capacity >= 0)) throw new SandboxError('TypeError', 'TextEncoder.encodeInto: the destination must be a Uint8Array.');
      return fittingUnits(units, capacity);
    },
    encodingOf(_run, label) {
      if (typeof label !== 'string' || label.length > 64) return null;
      try {
        return new TextDecoder(label).encoding;
      } catch {
        return null; // an unknown label, or "replacement"
      }
    },
    decode(run, bytes, encoding, fatal, ignoreBOM, stream, id) {
      if (!(bytes instanceof Uint8Array) || typeof encoding !== 'string' || typeof id !== 'number') {
        throw new SandboxError('TypeError', 'TextDecoder.decode: the input must be an ArrayBuffer, a typed array or a DataView.');
      }
      if (bytes.byteLength > MAX_UNITS_PER_CALL) throw new SandboxError('RangeError', tooLarge('TextDecoder.decode', 'bytes', 'decode larger inputs in parts with { stream: true }'));
      const streams = streamsOf(run);
      // A decoder left in the middle of a stream goes on with it; any other call starts afresh.
      const decoder = streams.get(id) ?? newDecoder(encoding, fatal === true, ignoreBOM === true);
      streams.delete(id);
      let text: string;
      try {
        text = decoder.decode(bytes, { stream: stream === true });
      } catch {
        throw new SandboxError('TypeError', `The encoded data was not valid for encoding ${encoding}.`);
      }
      if (stream === true) {
        if (streams.size >= MAX_STREAMS) run.exceeded(`The connector has more than ${MAX_STREAMS} TextDecoder streams in progress at once; end each with a decode() call without { stream: true }.`);
        streams.set(id, decoder);
      }
      return text;
    },
  },
};

function checkedText(text: unknown, what: string): string {
  if (typeof text !== 'string') throw new SandboxError('TypeError', `${what} expects a string.`);
  if (text.length > MAX_UNITS_PER_CALL) throw new SandboxError('RangeError', tooLarge(what, 'characters', 'encode the text in parts'));
  return text;
}

/** The encodings whose decoders drop a byte order mark that opens the stream (the Encoding standard). */
const BOM_ENCODINGS = new Set(['utf-8', 'utf-16le', 'utf-16be']);

/**
 * The Encoding standard's byte order mark, handled here rather than by Node: only a BOM that is the
 * stream's first code point is dropped. (Node 24 also drops one met later in a stream when the chunks
 * before it produced no text yet, e.g. a character cut after its first byte.)
 */
class BomStrippingDecoder implements Decoder {
  private atStart = true;

  constructor(private readonly inner: Decoder) {}

  decode(bytes: Uint8Array, options: { stream: boolean }): string {
    let text = this.inner.decode(bytes, options);
    if (this.atStart && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      this.atStart = false;
    }
    if (!options.stream) this.atStart = true;
    return text;
  }
}

/** The TextDecoders of a run in the middle of a stream, by the sandbox's id of each. */
const streamsOf = (run: HostRun) => run.local('encoding.streams', () => new Map<number, Decoder>());

function newDecoder(encoding: string, fatal: boolean, ignoreBOM: boolean): Decoder {
  if (encoding === 'windows-1252') return WINDOWS_1252;
  try {
    if (!ignoreBOM && BOM_ENCODINGS.has(encoding.toLowerCase())) return new BomStrippingDecoder(new TextDecoder(encoding, { fatal, ignoreBOM: true }));
    return new TextDecoder(encoding, { fatal, ignoreBOM });
  } catch {
    throw new SandboxError('RangeError', `The "${encoding.slice(0, 64)}" encoding is not supported.`);
  }
}

/** How many UTF-16 code units of a well-formed string, whole code points only, take at most `capacity` UTF-8 bytes. */
export function fittingUnits(text: string, capacity: number): number {
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const unit = text.charCodeAt(i);
    const pair = unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length;
    const size = unit < 0x80 ? 1 : unit < 0x800 ? 2 : pair ? 4 : 3;
    if (bytes + size > capacity) break;
    bytes += size;
    i += pair ? 2 : 1;
  }
  return i;
}

/**
 * windows-1252, which the labels "latin1", "ascii" and "iso-8859-1" stand for: ISO-8859-1 but for
 * 0x80-0x9F (WHATWG index-windows-1252). Node 20 decodes those bytes as ISO-8859-1 does; browsers
 * and the standard give the characters below.
 */
const WINDOWS_1252_HIGH = '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';
const WINDOWS_1252: Decoder = {
  decode: (bytes) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1').replace(/[\x80-\x9f]/g, (c) => WINDOWS_1252_HIGH[c.charCodeAt(0) - 0x80]),
};
