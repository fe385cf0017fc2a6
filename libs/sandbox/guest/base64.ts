/**
 * `atob` and `btoa` (HTML: forgiving-base64). The host checks and converts; here are the argument
 * conversion and the size limit, checked before a string is copied out of the engine.
 */
import type { Global } from './internal/global';
import { defineGlobal } from './internal/global';
import { MAX_UNITS_PER_CALL, tooLarge } from './internal/limits';
import { domString, requireArguments } from './internal/webidl';

/** The host functions of this module (libs/sandbox/src/host/base64.host.ts); both throw InvalidCharacterError DOMExceptions. */
interface Base64Host {
  atob(data: string): string;
  btoa(data: string): string;
}

export default function install(host: Base64Host, global: Global): void {
  const checked = (data: unknown, what: string, given: number) => {
    requireArguments(given, 1, what);
    const text = domString(data);
    if (text.length > MAX_UNITS_PER_CALL) throw new RangeError(tooLarge(what, 'characters', 'convert the data in parts'));
    return text;
  };
  defineGlobal(global, 'atob', function atob(data: unknown) {
    return host.atob(checked(data, 'atob', arguments.length));
  });
  defineGlobal(global, 'btoa', function btoa(data: unknown) {
    return host.btoa(checked(data, 'btoa', arguments.length));
  });
}
