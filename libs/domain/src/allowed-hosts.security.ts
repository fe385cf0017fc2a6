import fc from 'fast-check';
import { allowedHostProblem, isAllowedHost } from './allowed-hosts';

/**
 * allowedHosts decides which hosts a connector may call: an entry accepted at deploy must match what
 * it says and nothing more, and an entry that could never match must be refused at deploy.
 */

describe('allowedHosts: what deploy accepts', () => {
  it.each([
    ['a name', 'api.example.com'],
    ['upper case', 'API.Example.COM'],
    ['a final dot', 'api.example.com.'],
    ['a port', 'api.example.com:8443'],
    ['the highest port', 'api.example.com:65535'],
    ['a wildcard', '*.example.com'],
    ['a wildcard with a port', '*.example.com:443'],
    ['a single label', 'localhost'],
    ['hyphens and underscores', 'a-b_c.example'],
    ['punycode', 'xn--bcher-kva.de'],
    ['a label of 63 characters', `${'a'.repeat(63)}.com`],
    ['an IPv4 address', '203.0.113.7'],
    ['an IPv4 address with a port', '127.0.0.1:8080'],
    ['an IPv6 address', '[2001:db8::7]'],
    ['an IPv6 address in upper case', '[2001:DB8::7]'],
    ['an IPv6 address with a port', '[2001:db8::7]:8443'],
  ])('accepts %s: %s', (_why, entry) => {
    expect(allowedHostProblem(entry)).toBeNull();
  });

  it.each([
    ['empty', '', 'an empty entry allows nothing'],
    ['white space', ' api.example.com', 'contains white space'],
    ['a scheme', 'https://api.example.com', 'has a scheme: write the host alone, without https://'],
    ['another scheme', 'ftp://api.example.com', 'has a scheme: write the host alone, without ftp://'],
    ['a path', 'api.example.com/v1', 'is not a host'],
    ['a query', 'api.example.com?x=1', 'is not a host'],
    ['a fragment', 'api.example.com#x', 'is not a host'],
    ['credentials', 'user:pw@api.example.com', 'is not a host'],
    ['a backslash', 'api.example.com\\x', 'is not a host'],
    ['an empty port', 'api.example.com:', 'has an invalid port'],
    ['port 0', 'api.example.com:0', 'has an invalid port'],
    ['a port above 65535', 'api.example.com:65536', 'has an invalid port'],
    ['a padded port', 'api.example.com:08443', 'has an invalid port'],
    ['a named port', 'api.example.com:https', 'has an invalid port'],
    ['two ports', 'api.example.com:80:80', 'with at most one port'],
    ['only a port', ':8443', 'has no host name'],
    ['a leading dot', '.example.com', 'has an empty label'],
    ['two dots', 'example..com', 'has an empty label'],
    ['two final dots', 'example.com..', 'has an empty label'],
    ['a leading hyphen', '-api.example.com', "has an invalid label '-api'"],
    ['a trailing hyphen', 'api-.example.com', "has an invalid label 'api-'"],
    ['a percent sign', 'a%2e.example.com', "has an invalid label 'a%2e'"],
    ['a label of 64 characters', `${'a'.repeat(64)}.com`, 'has a label longer than 63 characters'],
    ['a name of 254 characters', `${'abcdefghi.'.repeat(25)}abcd`, 'is longer than 253 characters'],
    ['a name ending in a number', 'example.123', 'is neither a host name nor an IPv4 address'],
    ['non-ASCII', 'bücher.de', 'is not ASCII: write the name as URLs do, xn--bcher-kva.de'],
    ['a lone star', '*', 'has a misplaced wildcard'],
    ['a star inside a label', 'exa*mple.com', 'has a misplaced wildcard'],
    ['a star not first', 'api.*.example.com', 'has a misplaced wildcard'],
    ['two stars', '*.*.example.com', 'has a misplaced wildcard'],
    ['a star without a dot', '*example.com', 'has a misplaced wildcard'],
    ['a wildcard alone', '*.', 'has no host name'],
    ['a wildcard over a top-level domain', '*.com', 'allows a whole top-level domain'],
    ['a wildcard over an IPv4 address', '*.127.0.0.1', 'has a wildcard before an IP address'],
    ['a wildcard over a short IPv4 address', '*.0.0.1', 'has a wildcard before an IP address'],
    ['a wildcard over an IPv6 address', '*.[::1]', 'has a wildcard before an IP address'],
    ['IPv6 without brackets', '2001:db8::7', 'an IPv6 address goes in brackets'],
    ['IPv6 loopback without brackets', '::1', 'an IPv6 address goes in brackets'],
    ['an unclosed bracket', '[2001:db8::7', 'an IPv6 address goes in brackets'],
    ['IPv4 in brackets', '[127.0.0.1]', 'is not a valid IPv6 address'],
    ['a zone id', '[fe80::1%25eth0]', 'has a zone id'],
    ['IPv6 not in its short form', '[2001:db8:0:0::7]', 'is not written as URLs write it: use [2001:db8::7]'],
    ['IPv4-mapped IPv6 dotted', '[::ffff:127.0.0.1]', 'is not written as URLs write it: use [::ffff:7f00:1]'],
    ['short IPv4', '127.1', 'is not written as URLs write it: use 127.0.0.1'],
    ['hex IPv4', '0x7f.1', 'is not written as URLs write it: use 127.0.0.1'],
    ['decimal IPv4', '2130706433', 'is not written as URLs write it: use 127.0.0.1'],
    ['octal IPv4', '0177.0.0.1', 'is not written as URLs write it: use 127.0.0.1'],
    ['an IPv4 part above 255', '1.2.3.256', 'is neither a host name nor an IPv4 address'],
  ])('refuses %s: %j', (_why, entry, message) => {
    expect(allowedHostProblem(entry)).toContain(message);
  });
});

describe('allowedHosts: what an entry allows', () => {
  it.each([
    ['a name on any port', ['api.example.com'], 'https://api.example.com/x', true],
    ['a name on any port', ['api.example.com'], 'https://api.example.com:8443/x', true],
    ['a name in any case, with a final dot', ['API.Example.com.'], 'https://api.example.COM./x', true],
    ['not a name below it', ['api.example.com'], 'https://x.api.example.com/', false],
    ['not a longer name', ['api.example.com'], 'https://api.example.com.evil.io/', false],
    ['not a name ending like it', ['api.example.com'], 'https://evilapi.example.com/', false],
    ['a port, on that port (issue 14)', ['api.example.com:8443'], 'https://api.example.com:8443/x', true],
    ['a port, whatever the scheme', ['api.example.com:8443'], 'http://api.example.com:8443/x', true],
    ['a port, not the default port', ['api.example.com:8443'], 'https://api.example.com/x', false],
    ['a port, not another port', ['api.example.com:8443'], 'https://api.example.com:8444/x', false],
    ['port 443, the https default', ['api.example.com:443'], 'https://api.example.com/x', true],
    ['port 443, written out', ['api.example.com:443'], 'https://api.example.com:443/x', true],
    ['port 443, not http', ['api.example.com:443'], 'http://api.example.com/x', false],
    ['port 80, the http default', ['api.example.com:80'], 'http://api.example.com/x', true],
    ['a wildcard, one label below', ['*.example.com'], 'https://a.example.com/', true],
    ['a wildcard, two labels below', ['*.example.com'], 'https://a.b.example.com/', true],
    ['a wildcard, any port', ['*.example.com'], 'https://a.example.com:9000/', true],
    ['a wildcard, not the name itself', ['*.example.com'], 'https://example.com/', false],
    ['a wildcard, not a name ending like it', ['*.example.com'], 'https://badexample.com/', false],
    ['a wildcard with a port, on it', ['*.example.com:8443'], 'https://a.example.com:8443/', true],
    ['a wildcard with a port, not elsewhere', ['*.example.com:8443'], 'https://a.example.com/', false],
    ['an IPv4 address', ['127.0.0.1'], 'http://127.0.0.1:1234/', true],
    ['an IPv4 address in any URL spelling', ['127.0.0.1'], 'http://2130706433/', true],
    ['not a neighbouring address', ['127.0.0.1'], 'http://127.0.0.2/', false],
    ['an IPv6 address with a port', ['[::1]:8080'], 'http://[::1]:8080/', true],
    ['an IPv6 address in any URL spelling', ['[::1]:8080'], 'http://[0:0::1]:8080/', true],
    ['an IPv6 address, not another port', ['[::1]:8080'], 'http://[::1]/', false],
    ['nothing for an invalid entry', ['example..com', 'api.example.com:0', '*.com'], 'https://a.com/', false],
    ['nothing for an entry written differently from URLs', ['127.1'], 'http://127.1/', false],
    ['nothing for no entries', [], 'https://api.example.com/', false],
  ])('%s', (_why, entries, url, allowed) => {
    expect(isAllowedHost(new URL(url), entries)).toBe(allowed);
  });
});

describe('allowedHosts: properties', () => {
  const port = fc.integer({ min: 1, max: 65535 });
  const scheme = fc.constantFrom('http', 'https');

  it('accepts any DNS name, and an entry allows its name on any port', () => {
    fc.assert(
      fc.property(fc.domain(), scheme, port, (name, s, p) => {
        expect(allowedHostProblem(name)).toBeNull();
        expect(isAllowedHost(new URL(`${s}://${name}:${p}/`), [name])).toBe(true);
      }),
    );
  });

  it('allows a name with a port on that port only', () => {
    fc.assert(
      fc.property(fc.domain(), scheme, port, port, (name, s, entryPort, urlPort) => {
        const entry = `${name}:${entryPort}`;
        expect(allowedHostProblem(entry)).toBeNull();
        const url = new URL(`${s}://${name}:${urlPort}/`);
        const effectivePort = url.port === '' ? (s === 'https' ? 443 : 80) : urlPort;
        expect(isAllowedHost(url, [entry])).toBe(effectivePort === entryPort);
      }),
    );
  });

  it('allows any name below a wildcard, never the name itself or a name merely ending like it', () => {
    const label = fc.stringMatching(/^[a-z0-9]{1,10}$/);
    fc.assert(
      fc.property(fc.domain().filter((d) => d.includes('.')), label, (name, sub) => {
        expect(allowedHostProblem(`*.${name}`)).toBeNull();
        expect(isAllowedHost(new URL(`https://${sub}.${name}/`), [`*.${name}`])).toBe(true);
        expect(isAllowedHost(new URL(`https://${name}/`), [`*.${name}`])).toBe(false);
        expect(isAllowedHost(new URL(`https://${sub}${name}/`), [`*.${name}`])).toBe(false);
      }),
    );
  });

  it('makes every entry it accepts match some URL: nothing accepted is dead', () => {
    const ipv4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255)).map((b) => b.join('.'));
    const ipv6 = fc.ipV6().map((a) => new URL(`http://[${a}]/`).hostname);
    const host = fc.oneof(fc.domain(), ipv4, ipv6);
    const entry = fc.tuple(host, fc.option(port)).map(([h, p]) => (p === null ? h : `${h}:${p}`));
    fc.assert(
      fc.property(entry, (e) => {
        expect(allowedHostProblem(e)).toBeNull();
        expect(isAllowedHost(new URL(`http://${e}/`), [e])).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it('never throws and never allows anything for entries deploy refuses', () => {
    const nearHost = fc.string({ unit: fc.constantFrom(...'ab0123456789.-*:[]/@%_ xX'), maxLength: 30 });
    fc.assert(
      fc.property(fc.oneof(fc.string(), nearHost), scheme, port, (e, s, p) => {
        const problem = allowedHostProblem(e);
        if (problem === null) return;
        for (const host of ['a.example', '127.0.0.1', '[::1]', 'ab.ab', 'a']) {
          expect(isAllowedHost(new URL(`${s}://${host}:${p}/`), [e])).toBe(false);
        }
      }),
      { numRuns: 5000 },
    );
  });
});
