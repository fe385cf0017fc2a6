import { allowedHostProblem, isAllowedHost } from './allowed-hosts';

/**
 * What deploy answers for each kind of entry, word for word: the reader is told what to write instead.
 * allowed-hosts.security.ts holds the attack-surface properties (nothing refused can match, nothing accepted is dead).
 */
describe('allowedHostProblem, each rule with its message', () => {
  const notAHost = 'is not a host: give a host name, optionally with :port, without a path, query or credentials';
  const badPort = 'has an invalid port: it must be a number from 1 to 65535';
  const badLabel = (label: string) => `has an invalid label '${label}': letters, digits, hyphens and underscores, not starting or ending with a hyphen`;
  const brackets = 'is not a host: an IPv6 address goes in brackets, as in [2001:db8::7] or [2001:db8::7]:8443';

  it.each([
    ['a\tb', 'contains white space'],
    ['HTTP+x://a', 'has a scheme: write the host alone, without HTTP+x://'],
    ['a/v1', notAHost],
    ['a?x', notAHost],
    ['a#x', notAHost],
    ['u@a', notAHost],
    ['a\\b', notAHost],
    ['a/http://b', notAHost],
    ['exa*mple.com', 'has a misplaced wildcard: it can only be the whole first label, as in *.example.com'],
    ['a:80:80', brackets],
    ['[2001:db8::7', brackets],
    ['[::1]x', 'is not a host: give a host name with at most one port, as in api.example.com:8443'],
    ['zz:1:2', 'is not a host: give a host name with at most one port, as in api.example.com:8443'],
    ['a:', badPort],
    ['a:0', badPort],
    ['a:08443', badPort],
    ['a:65536', badPort],
    ['a:8443x', badPort],
    ['[::1]:x', badPort],
    ['*.[::1]', 'has a wildcard before an IP address: a wildcard only applies to names'],
    ['[fe80::1%25eth0]', 'has a zone id: zone ids cannot be used in URLs'],
    ['[127.0.0.1]', 'is not a valid IPv6 address'],
    ['[2001:db8:0:0::7]', 'is not written as URLs write it: use [2001:db8::7]'],
    [':8443', 'has no host name'],
    ['*.', 'has no host name'],
    ['bücher.de', 'is not ASCII: write the name as URLs do, xn--bcher-kva.de'],
    ['a\u0378.com', 'is not a valid host name'],
    [`${'abcdefghi.'.repeat(25)}abcd`, 'is longer than 253 characters'],
    ['.example.com', 'has an empty label (a dot at the start or two dots in a row)'],
    ['example.com..', 'has an empty label (a dot at the start or two dots in a row)'],
    [`${'a'.repeat(64)}.com`, 'has a label longer than 63 characters'],
    ['-api.example.com', badLabel('-api')],
    ['api-.example.com', badLabel('api-')],
    ['a%2e.example.com', badLabel('a%2e')],
    ['example.123', 'is neither a host name nor an IPv4 address (a name cannot end in a number)'],
    ['*.127.0.0.1', 'has a wildcard before an IP address: a wildcard only applies to names'],
    ['*.10.20.30.40', 'has a wildcard before an IP address: a wildcard only applies to names'],
    ['127.1', 'is not written as URLs write it: use 127.0.0.1'],
    ['*.com', 'allows a whole top-level domain: a wildcard needs at least two labels after it, as in *.example.com'],
  ])('%j', (entry, message) => {
    expect(allowedHostProblem(entry)).toBe(`'${entry.slice(0, 100)}' ${message}`);
  });

  it('quotes at most 100 characters of the entry, and says an empty one allows nothing', () => {
    const long = `${'x'.repeat(120)} `;
    expect(allowedHostProblem(long)).toBe(`'${'x'.repeat(100)}' contains white space`);
    expect(allowedHostProblem('')).toBe('an empty entry allows nothing');
  });

  it.each([
    'a',
    '_a',
    'a_',
    'a-b.example',
    'API.example.com',
    'example.com.',
    'a:1',
    'a:65535',
    `${'a'.repeat(63)}.com`,
    `${'abcdefghi.'.repeat(25)}abc.`,
    '*.a_b.com',
    '*.1.2.3.4a',
    '[2001:DB8::7]',
    '[::1]:8080',
    '10.0.0.1:8080',
  ])('accepts %j', (entry) => {
    expect(allowedHostProblem(entry)).toBeNull();
  });
});

describe('isAllowedHost', () => {
  const allows = (url: string, ...entries: string[]) => isAllowedHost(new URL(url), entries);

  it('compares the port of the URL, its scheme\'s default when it names none', () => {
    expect(allows('https://a.example/', 'a.example:443')).toBe(true);
    expect(allows('http://a.example/', 'a.example:80')).toBe(true);
    expect(allows('http://a.example/', 'a.example:443')).toBe(false);
    expect(allows('https://a.example:8443/', 'a.example:8443')).toBe(true);
    expect(allows('https://a.example:8443/', 'a.example:443')).toBe(false);
    expect(allows('https://a.example:8443/', 'a.example')).toBe(true);
  });

  it('matches the name itself, with or without a final dot, and a wildcard only below it', () => {
    expect(allows('https://a.example./', 'a.example')).toBe(true);
    expect(allows('https://a.example/', 'a.example.')).toBe(true);
    expect(allows('https://b.a.example/', 'a.example')).toBe(false);
    expect(allows('https://b.a.example/', '*.a.example')).toBe(true);
    expect(allows('https://ba.example/', '*.a.example')).toBe(false);
    expect(allows('https://a.example/', '*.a.example')).toBe(false);
  });

  it('matches an IPv6 address on its port', () => {
    expect(allows('http://[::1]:8080/', '[::1]:8080')).toBe(true);
    expect(allows('http://[::1]:8081/', '[::1]:8080')).toBe(false);
  });

  it('passes over entries that allow nothing, and allows when any entry does', () => {
    expect(allows('https://a.example:0/', 'a.example:0')).toBe(false);
    expect(allows('https://a.example/', 'https://a.example', 'b.example', 'a.example')).toBe(true);
    expect(allows('https://a.example/')).toBe(false);
  });
});
