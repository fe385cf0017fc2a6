import type { GlobalsModule } from './host-module';

/** `URL` and `URLSearchParams`: parsed and serialised by Node's WHATWG implementation. */
export const urlModule: GlobalsModule = {
  name: 'url',
  globals: ['URL', 'URLSearchParams'],
  functions: {
    parse(_run, input, base) {
      if (typeof input !== 'string' || (base !== undefined && typeof base !== 'string')) return null;
      try {
        return recordOf(new URL(input, base));
      } catch {
        return null;
      }
    },
    update(_run, href, part, value) {
      const url = new URL(String(href));
      if (typeof part === 'string' && SETTABLE.has(part)) (url as unknown as Record<string, string>)[part] = String(value);
      return recordOf(url);
    },
    parseQuery: (_run, query) => [...new URLSearchParams(String(query))],
    serializeQuery(_run, pairs) {
      if (!Array.isArray(pairs)) return '';
      return new URLSearchParams(pairs.filter((pair): pair is [string, string] => Array.isArray(pair) && pair.length === 2).map(([n, v]): [string, string] => [String(n), String(v)])).toString();
    },
  },
};

const SETTABLE = new Set(['protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'hash']);

function recordOf(url: URL) {
  const { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash } = url;
  return { href, origin, protocol, username, password, host, hostname, port, pathname, search, hash };
}
