/**
 * An integration's `allowedHosts`: the hosts its connector may call. An entry is a host as URLs write
 * it, optionally with a wildcard first label and a port:
 * - `api.example.com` allows that name on any port;
 * - `api.example.com:8443` allows it on port 8443 only (`:443` also matches `https://api.example.com/`);
 * - `*.example.com` allows any name below example.com, never example.com itself;
 * - `203.0.113.7` and `[2001:db8::7]` allow that address (the egress guard still refuses private ones).
 * Entries are checked at deploy, so an entry that is accepted can match.
 */

interface AllowedHost {
  /** Lower case, without a final dot; IPv6 in brackets, in the short form URLs use. */
  host: string;
  /** `*.example.com`: any name below `host`. */
  wildcard: boolean;
  /** The only port allowed; null for any. */
  port: number | null;
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };
const MAX_NAME_LENGTH = 253;
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/i;

/** `host` as WHATWG URLs write it, or null when no URL can have it as its host. */
function urlHost(host: string): string | null {
  try {
    return new URL(`http://${host}/`).hostname;
  } catch {
    return null;
  }
}

function read(entry: string): AllowedHost | { problem: string } {
  const problem = (text: string) => ({ problem: `'${entry.slice(0, 100)}' ${text}` });
  if (entry === '') return { problem: 'an empty entry allows nothing' };
  if (/\s/.test(entry)) return problem('contains white space');
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(entry);
  if (scheme) return problem(`has a scheme: write the host alone, without ${scheme[1]}//`);
  if (/[/?#@\\]/.test(entry)) return problem('is not a host: give a host name, optionally with :port, without a path, query or credentials');
  const wildcard = entry.startsWith('*.');
  const rest = wildcard ? entry.slice(2) : entry;
  if (rest.includes('*')) return problem('has a misplaced wildcard: it can only be the whole first label, as in *.example.com');

  const parts = rest.startsWith('[') ? /^(\[[^\]]*\])(?::([^:]*))?$/.exec(rest) : /^([^:]*)(?::([^:]*))?$/.exec(rest);
  if (!parts) {
    return /^[[\]0-9a-f:.]+$/i.test(rest)
      ? problem('is not a host: an IPv6 address goes in brackets, as in [2001:db8::7] or [2001:db8::7]:8443')
      : problem('is not a host: give a host name with at most one port, as in api.example.com:8443');
  }
  const [, host, portText] = parts;
  let port: number | null = null;
  if (portText !== undefined) {
    if (!/^[1-9]\d{0,4}$/.test(portText) || Number(portText) > 65535) return problem('has an invalid port: it must be a number from 1 to 65535');
    port = Number(portText);
  }

  if (host.startsWith('[')) {
    if (wildcard) return problem('has a wildcard before an IP address: a wildcard only applies to names');
    if (host.includes('%')) return problem('has a zone id: zone ids cannot be used in URLs');
    const canonical = urlHost(host);
    if (canonical === null) return problem('is not a valid IPv6 address');
    if (canonical !== host.toLowerCase()) return problem(`is not written as URLs write it: use ${canonical}`);
    return { host: canonical, wildcard, port };
  }

  const name = host.replace(/\.$/, '');
  if (name === '') return problem('has no host name');
  if (/[^\x21-\x7e]/.test(name)) {
    const ascii = urlHost(name);
    return problem(ascii ? `is not ASCII: write the name as URLs do, ${ascii}` : 'is not a valid host name');
  }
  if (name.length > MAX_NAME_LENGTH) return problem(`is longer than ${MAX_NAME_LENGTH} characters`);
  for (const label of name.split('.')) {
    if (label === '') return problem('has an empty label (a dot at the start or two dots in a row)');
    if (label.length > 63) return problem(`has a label longer than 63 characters`);
    if (!LABEL.test(label)) return problem(`has an invalid label '${label.slice(0, 63)}': letters, digits, hyphens and underscores, not starting or ending with a hyphen`);
  }
  const canonical = urlHost(name);
  if (canonical === null) return problem('is neither a host name nor an IPv4 address (a name cannot end in a number)');
  // URLs read a host ending in a number as IPv4 and write it as dotted decimal.
  if (wildcard && /^\d+\.\d+\.\d+\.\d+$/.test(canonical)) return problem('has a wildcard before an IP address: a wildcard only applies to names');
  if (canonical !== name.toLowerCase()) return problem(`is not written as URLs write it: use ${canonical}`);
  if (wildcard && !name.includes('.')) return problem('allows a whole top-level domain: a wildcard needs at least two labels after it, as in *.example.com');
  return { host: canonical, wildcard, port };
}

/** Null when `entry` can be one of an integration's allowedHosts, else what is wrong with it. */
export function allowedHostProblem(entry: string): string | null {
  const result = read(entry);
  return 'problem' in result ? result.problem : null;
}

/** True when an entry of `allowedHosts` allows a request to `url` (its host and its port). */
export function isAllowedHost(url: URL, allowedHosts: readonly string[]): boolean {
  const host = url.hostname.replace(/\.$/, '');
  const port = url.port === '' ? DEFAULT_PORTS[url.protocol] : Number(url.port);
  return allowedHosts.some((text) => {
    const entry = read(text);
    if ('problem' in entry || (entry.port !== null && entry.port !== port)) return false;
    return entry.wildcard ? host.endsWith(`.${entry.host}`) : host === entry.host;
  });
}
