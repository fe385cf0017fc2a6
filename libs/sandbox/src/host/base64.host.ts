import { MAX_UNITS_PER_CALL, tooLarge } from '../../guest/internal/limits';
import { SandboxError, type GlobalsModule } from './host-module';

/** `atob` and `btoa`, exactly as the HTML standard defines them; Buffer does the conversion. */
export const base64Module: GlobalsModule = {
  name: 'base64',
  globals: ['atob', 'btoa'],
  functions: {
    atob: (_run, data) => atob(checked(data, 'atob')),
    btoa: (_run, data) => btoa(checked(data, 'btoa')),
  },
};

const invalid = (message = 'Invalid character') => new SandboxError('DOMException', message, 'InvalidCharacterError');

function checked(data: unknown, what: string): string {
  if (typeof data !== 'string') throw new SandboxError('TypeError', `${what} expects a string.`);
  if (data.length > MAX_UNITS_PER_CALL) throw new SandboxError('RangeError', tooLarge(what, 'characters', 'convert the data in parts'));
  return data;
}

/** Forgiving-base64 decode (WHATWG Infra): ASCII whitespace ignored, padding optional, trailing bits ignored. */
function atob(data: string): string {
  let text = data.replace(/[\t\n\f\r ]+/g, '');
  if (text.length % 4 === 0) text = text.replace(/==?$/, '');
  if (/[^A-Za-z0-9+/]/.test(text)) throw invalid();
  if (text.length % 4 === 1) throw invalid('The string to be decoded is not correctly encoded.');
  return Buffer.from(text, 'base64').toString('latin1');
}

/** Base64 of a string whose characters are all bytes (U+0000 to U+00FF). */
function btoa(data: string): string {
  if (/[^\x00-\xff]/.test(data)) throw invalid();
  return Buffer.from(data, 'latin1').toString('base64');
}
