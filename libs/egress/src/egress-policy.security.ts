import fc from 'fast-check';
import { isIP } from 'node:net';
import { EgressRefused, resolveDestination, type ResolveHost } from './destination';
import { canonicalAddress, isForbiddenAddress, isLoopbackAddress } from './egress-policy';

/**
 * The SSRF guard, attacked with every spelling of an address that leads somewhere private. Nothing here
 * opens a connection: the decisions are checked on address strings, URL host names and the answers of a
 * stand-in resolver.
 */

/** Addresses as a DNS answer, a trusted-address setting or a URL host (without brackets) may give them. */
const REFUSED_ADDRESSES: Array<[string, string]> = [
  // IPv4 ranges that are not public, at their edges, and the cloud metadata endpoints.
  ['loopback', '127.0.0.1'],
  ['loopback, top of range', '127.255.255.254'],
  ['private 10/8', '10.0.0.1'],
  ['private 10/8, top', '10.255.255.255'],
  ['private 172.16/12, bottom', '172.16.0.0'],
  ['private 172.16/12, top', '172.31.255.255'],
  ['private 192.168/16', '192.168.0.1'],
  ['link-local, AWS/GCP/Azure metadata', '169.254.169.254'],
  ['link-local, ECS task metadata', '169.254.170.2'],
  ['shared 100.64/10, Alibaba metadata', '100.100.100.200'],
  ['shared 100.64/10, bottom', '100.64.0.0'],
  ['shared 100.64/10, top', '100.127.255.255'],
  ['this network', '0.0.0.0'],
  ['this network, any host', '0.1.2.3'],
  ['IETF protocol assignments', '192.0.0.192'],
  ['documentation TEST-NET-1', '192.0.2.1'],
  ['documentation TEST-NET-2', '198.51.100.1'],
  ['documentation TEST-NET-3', '203.0.113.1'],
  ['benchmarking, bottom', '198.18.0.1'],
  ['benchmarking, top', '198.19.255.255'],
  ['6to4 relay anycast', '192.88.99.1'],
  ['multicast', '224.0.0.1'],
  ['multicast SSDP', '239.255.255.250'],
  ['reserved', '240.0.0.1'],
  ['broadcast', '255.255.255.255'],
  // Strings a socket would not take as they are (net.isIP says no): refused rather than guessed at.
  ['decimal IPv4', '2130706433'],
  ['octal IPv4', '0177.0.0.1'],
  ['hex IPv4', '0x7f.1'],
  ['short IPv4', '127.1'],
  ['hex integer IPv4', '0x7f000001'],
  ['zero-padded IPv4', '127.000.000.001'],
  ['octal integer IPv4', '017700000001'],
  ['empty', ''],
  ['a name', 'localhost'],
  ['leading space', ' 127.0.0.1'],
  ['trailing space, public address', '8.8.8.8 '],
  ['brackets', '[::1]'],
  ['brackets, mapped', '[::ffff:127.0.0.1]'],
  ['zero-padded dotted tail', '::ffff:0127.0.0.1'],
  ['two ::', '1::2::3'],
  ['five hex digits', '00000::1'],
  // IPv6 unspecified and loopback in every spelling.
  ['unspecified', '::'],
  ['unspecified, expanded', '0:0:0:0:0:0:0:0'],
  ['loopback', '::1'],
  ['loopback, expanded', '0:0:0:0:0:0:0:1'],
  ['loopback, zero-padded', '0000:0000:0000:0000:0000:0000:0000:0001'],
  ['loopback, partly compressed', '::0:1'],
  ['loopback, padded group', '::0001'],
  // IPv4-mapped IPv6 (::ffff:0:0/96): judged as the IPv4 address it reaches.
  ['mapped loopback, dotted', '::ffff:127.0.0.1'],
  ['mapped loopback, upper case', '::FFFF:127.0.0.1'],
  ['mapped loopback, hex', '::ffff:7f00:1'],
  ['mapped loopback, hex upper case padded', '::FFFF:7F00:0001'],
  ['mapped loopback, expanded', '0:0:0:0:0:ffff:7f00:1'],
  ['mapped loopback, expanded padded', '0000:0000:0000:0000:0000:FFFF:7F00:0001'],
  ['mapped loopback, expanded dotted', '0:0:0:0:0:ffff:127.0.0.1'],
  ['mapped metadata, hex', '::ffff:a9fe:a9fe'],
  ['mapped metadata, dotted', '::ffff:169.254.169.254'],
  ['mapped private', '::ffff:10.0.0.1'],
  ['mapped unspecified', '::ffff:0:0'],
  // IPv4-compatible IPv6 (::/96, deprecated): refused whatever it embeds.
  ['compatible loopback, dotted', '::127.0.0.1'],
  ['compatible loopback, hex (as URLs write it)', '::7f00:1'],
  ['compatible loopback, expanded', '0:0:0:0:0:0:7f00:1'],
  ['compatible loopback, partly compressed', '::0:7f00:1'],
  ['compatible metadata, hex', '::a9fe:a9fe'],
  ['compatible metadata, dotted', '::169.254.169.254'],
  ['compatible public, dotted', '::8.8.8.8'],
  ['compatible public, hex', '::808:808'],
  // IPv4-translated (::ffff:0:0:0/96).
  ['translated loopback', '::ffff:0:7f00:1'],
  ['translated public', '::ffff:0:808:808'],
  // NAT64: the well-known prefix is judged by the IPv4 address it embeds; the local-use prefix is refused.
  ['NAT64 loopback, hex', '64:ff9b::7f00:1'],
  ['NAT64 loopback, dotted', '64:ff9b::127.0.0.1'],
  ['NAT64 metadata, upper case', '64:FF9B::A9FE:A9FE'],
  ['NAT64 private, expanded', '64:ff9b:0:0:0:0:a00:1'],
  ['NAT64 local-use, loopback', '64:ff9b:1::7f00:1'],
  ['NAT64 local-use, public', '64:ff9b:1::808:808'],
  ['NAT64 local-use, top', '64:ff9b:1:ffff::1'],
  // 6to4 and Teredo (deprecated tunnels): refused whatever they embed.
  ['6to4 loopback', '2002:7f00:1::'],
  ['6to4 metadata', '2002:a9fe:a9fe::1'],
  ['6to4 public', '2002:808:808::1'],
  ['Teredo', '2001:0:4136:e378:8000:63bf:3fff:fdd2'],
  ['Teredo, short', '2001::1'],
  // Zone ids: only meaningful on link-local addresses, refused on any.
  ['zone id', 'fe80::1%eth0'],
  ['zone id, URL-encoded', 'fe80::1%25eth0'],
  ['zone id on a public address', '2606:4700:4700::1111%eth0'],
  ['zone id on loopback', '::1%lo'],
  ['zone id on IPv4', '8.8.8.8%eth0'],
  // Other IPv6 ranges that are not global unicast.
  ['link-local', 'fe80::1'],
  ['link-local, upper case', 'FE80::1'],
  ['link-local, top', 'febf:ffff::1'],
  ['site-local', 'fec0::1'],
  ['unique local', 'fc00::1'],
  ['unique local, AWS metadata', 'fd00:ec2::254'],
  ['unique local, random', 'fd12:3456:789a::1'],
  ['multicast, link', 'ff02::1'],
  ['multicast, site', 'ff05::1:3'],
  ['discard-only', '100::1'],
  ['documentation', '2001:db8::1'],
  ['documentation, RFC 9637', '3fff::1'],
  ['benchmarking', '2001:2::1'],
  ['ORCHIDv2', '2001:20::1'],
  ['IETF protocol assignments, top', '2001:1ff:ffff::1'],
  ['below global unicast', '1fff:ffff::1'],
  ['above global unicast', '4000::1'],
  ['reserved', 'e000::1'],
];

const ALLOWED_ADDRESSES: Array<[string, string]> = [
  ['public', '8.8.8.8'],
  ['public', '1.1.1.1'],
  ['public', '93.184.216.34'],
  ['just above this network', '1.0.0.0'],
  ['just below 10/8', '9.255.255.255'],
  ['just above 10/8', '11.0.0.0'],
  ['just below 100.64/10', '100.63.255.255'],
  ['just above 100.64/10', '100.128.0.0'],
  ['just below 127/8', '126.255.255.255'],
  ['just above 127/8', '128.0.0.0'],
  ['just below 169.254/16', '169.253.255.255'],
  ['just above 169.254/16', '169.255.0.0'],
  ['just below 172.16/12', '172.15.255.255'],
  ['just above 172.16/12', '172.32.0.0'],
  ['just below 192.168/16', '192.167.255.255'],
  ['just above 192.168/16', '192.169.0.0'],
  ['just below 198.18/15', '198.17.255.255'],
  ['just above 198.18/15', '198.20.0.0'],
  ['just below multicast', '223.255.255.255'],
  ['mapped public, dotted', '::ffff:8.8.8.8'],
  ['mapped public, hex', '::ffff:808:808'],
  ['mapped public, upper case padded', '::FFFF:0808:0808'],
  ['mapped public, expanded', '0:0:0:0:0:ffff:808:808'],
  ['mapped public, expanded dotted', '0000:0000:0000:0000:0000:ffff:8.8.8.8'],
  ['NAT64 public, dotted', '64:ff9b::8.8.8.8'],
  ['NAT64 public, hex', '64:ff9b::808:808'],
  ['global unicast', '2606:4700:4700::1111'],
  ['global unicast, expanded', '2606:4700:4700:0:0:0:0:1111'],
  ['global unicast, padded', '2606:4700:4700:0000:0000:0000:0000:1111'],
  ['global unicast, upper case', '2A00:1450:4001:81C::200E'],
  ['bottom of global unicast', '2000::1'],
  ['just above IETF protocol assignments', '2001:200::1'],
  ['just above documentation', '2001:db9::1'],
  ['just above 6to4', '2003::1'],
  ['just above RFC 9637 documentation', '3fff:1000::1'],
  ['top of global unicast', '3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'],
];

/** A resolver that fails the test if it is asked: literal addresses must never go to DNS. */
const noDns: ResolveHost = async (host) => {
  throw new Error(`DNS asked for ${host}`);
};

/** What the guard decides on a URL, the way callbacks and connector HTTP reach it. */
async function urlDecision(url: string, trusted: readonly string[] = []): Promise<'refused' | 'allowed'> {
  try {
    await resolveDestination(new URL(url).hostname, { addresses: trusted }, noDns);
    return 'allowed';
  } catch (error) {
    if (error instanceof EgressRefused) return 'refused';
    throw error;
  }
}

describe('SSRF guard: address strings', () => {
  it.each(REFUSED_ADDRESSES)('refuses %s: %j', (_why, address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(ALLOWED_ADDRESSES)('allows %s: %j', (_why, address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('SSRF guard: trusting loopback (gi connector run --trust-loopback)', () => {
  const trustingLoopback = (address: string) =>
    resolveDestination('mock.example.test', { addresses: [], loopback: true }, async () => [{ address, family: address.includes(':') ? 6 : 4 }]).then(
      () => 'allowed',
      () => 'refused',
    );

  it.each(REFUSED_ADDRESSES.filter(([, address]) => !isLoopbackAddress(address)))('still refuses %s: %j', async (_why, address) => {
    expect(await trustingLoopback(address)).toBe('refused');
  });

  it.each(['127.0.0.1', '127.255.255.254', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1', '::ffff:7f00:2'])('allows loopback %j', async (address) => {
    expect(await trustingLoopback(address)).toBe('allowed');
  });
});

describe('SSRF guard: URL host names', () => {
  // WHATWG URL parsing turns every IPv4 spelling into dotted decimal and IPv6 into its short form.
  it.each([
    ['IPv4-compatible IPv6 with a port (issue 14)', 'http://[::127.0.0.1]:8080/hook'],
    ['IPv4-compatible IPv6 in hex', 'http://[::7f00:1]/'],
    ['decimal IPv4', 'http://2130706433/'],
    ['octal IPv4', 'http://0177.0.0.1/'],
    ['hex IPv4', 'http://0x7f.1/'],
    ['short IPv4', 'http://127.1/'],
    ['hex integer IPv4', 'http://0x7f000001/'],
    ['octal integer IPv4', 'http://017700000001/'],
    ['trailing dot', 'http://127.0.0.1./'],
    ['percent-encoded', 'http://%31%32%37.0.0.1/'],
    ['full-width digits', 'http://１２７.０.０.１/'],
    ['zero', 'http://0/'],
    ['hex zero', 'http://0x0/'],
    ['IPv4-mapped, dotted', 'http://[::ffff:127.0.0.1]/'],
    ['IPv4-mapped, expanded upper case', 'http://[0:0:0:0:0:FFFF:7F00:0001]/'],
    ['IPv4-mapped metadata', 'http://[::ffff:a9fe:a9fe]/'],
    ['metadata', 'http://169.254.169.254/latest/meta-data/'],
    ['metadata, hex integer', 'http://0xa9fea9fe/'],
    ['metadata, octal', 'http://0251.0376.0251.0376/'],
    ['metadata, decimal', 'http://2852039166/'],
    ['metadata, NAT64', 'http://[64:ff9b::169.254.169.254]/'],
    ['metadata, 6to4', 'http://[2002:a9fe:a9fe::]/'],
    ['IPv6 unspecified', 'http://[::]/'],
    ['IPv6 loopback', 'http://[::1]:8080/'],
    ['IPv6 loopback, expanded', 'http://[0000:0000:0000:0000:0000:0000:0000:0001]/'],
    ['AWS IPv6 metadata', 'http://[fd00:ec2::254]/'],
    ['short private', 'http://10.1/'],
    ['short private, 3 parts', 'http://192.168.257/'],
    ['mixed bases', 'http://0xc0.0250.1.1/'],
    ['https', 'https://[::ffff:10.0.0.1]:8443/'],
  ])('refuses %s: %s', async (_why, url) => {
    expect(await urlDecision(url)).toBe('refused');
  });

  it.each([
    ['public', 'http://8.8.8.8/'],
    ['public, decimal', 'http://134744072/'],
    ['public, IPv4-mapped', 'http://[::ffff:8.8.8.8]/'],
    ['public IPv6', 'https://[2606:4700:4700::1111]:443/'],
  ])('allows %s: %s', async (_why, url) => {
    expect(await urlDecision(url)).toBe('allowed');
  });

  it.each([
    ['zone id', 'http://[fe80::1%25eth0]/'],
    ['raw zone id', 'http://[fe80::1%eth0]/'],
    ['five-part IPv4', 'http://1.2.3.4.5/'],
    ['IPv4 part out of range', 'http://256.0.0.1/'],
    ['unclosed bracket', 'http://[::1/'],
  ])('never reaches the guard with %s: URLs refuse %s', (_why, url) => {
    expect(() => new URL(url)).toThrow();
  });
});

describe('SSRF guard: DNS answers', () => {
  const answering =
    (...addresses: string[]): ResolveHost =>
    async () =>
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it.each([
    ['IPv4-mapped loopback, dotted', ['::ffff:127.0.0.1']],
    ['IPv4-mapped loopback, hex', ['::ffff:7f00:1']],
    ['IPv4-compatible loopback', ['::7f00:1']],
    ['NAT64 metadata', ['64:ff9b::a9fe:a9fe']],
    ['6to4', ['2002:a00:1::1']],
    ['scoped link-local', ['fe80::1%eth0']],
    ['one private among public ones', ['8.8.8.8', '2606:4700:4700::1111', '10.0.0.1']],
    ['something that is not an address', ['0177.0.0.1']],
    ['no address at all', []],
  ])('refuses a name that resolves to %s', async (_why, addresses) => {
    await expect(resolveDestination('api.example.test', { addresses: [] }, answering(...addresses))).rejects.toThrow(EgressRefused);
  });

  it('connects to the first of the public addresses a name resolves to', async () => {
    await expect(resolveDestination('api.example.test', { addresses: [] }, answering('2606:4700:4700::1111', '8.8.8.8'))).resolves.toEqual({
      address: '2606:4700:4700::1111',
      family: 6,
    });
  });

  it('reports a name that does not resolve as unresolvable, not as private', async () => {
    const failing: ResolveHost = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    await expect(resolveDestination('nowhere.example.test', { addresses: [] }, failing)).rejects.toThrow("The host 'nowhere.example.test' could not be resolved.");
  });
});

describe('SSRF guard: trusted addresses', () => {
  it.each([
    ['the same address', ['127.0.0.1'], '127.0.0.1', true],
    ['its IPv4-mapped form', ['127.0.0.1'], '::ffff:127.0.0.1', true],
    ['its IPv4-mapped form in hex', ['127.0.0.1'], '::ffff:7f00:1', true],
    ['the IPv4 address a mapped entry means', ['::ffff:127.0.0.1'], '127.0.0.1', true],
    ['an expanded IPv6 entry', ['0:0:0:0:0:0:0:1'], '::1', true],
    ['an upper-case IPv6 entry', ['FD00::5'], 'fd00::5', true],
    ['not the IPv4-compatible form', ['127.0.0.1'], '::7f00:1', false],
    ['not the NAT64 form', ['127.0.0.1'], '64:ff9b::7f00:1', false],
    ['not a neighbour', ['127.0.0.1'], '127.0.0.2', false],
    ['not an address that merely starts the same', ['10.0.0.5'], '10.0.0.50', false],
    ['not :: for ::1', ['::1'], '::', false],
    ['nothing for a malformed entry', ['127.1'], '127.0.0.1', false],
  ])('trusts %s', async (_why, trusted, address, permitted) => {
    const answer: ResolveHost = async () => [{ address, family: address.includes(':') ? 6 : 4 }];
    const decision = resolveDestination('receiver.example.test', { addresses: trusted }, answer).then(
      () => true,
      () => false,
    );
    expect(await decision).toBe(permitted);
  });

  it('trusts a literal URL host spelled differently from the setting', async () => {
    expect(await urlDecision('http://[::ffff:127.0.0.1]:9000/', ['127.0.0.1'])).toBe('allowed');
    expect(await urlDecision('http://2130706433:9000/', ['::ffff:127.0.0.1'])).toBe('allowed');
    expect(await urlDecision('http://[::127.0.0.1]:9000/', ['127.0.0.1'])).toBe('refused');
  });

  it('writes every address in one spelling, an IPv4-mapped one as its IPv4 address', () => {
    expect(canonicalAddress('::FFFF:7F00:0001')).toBe('127.0.0.1');
    expect(canonicalAddress('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalAddress('2606:4700:4700:0000:0000:0000:0000:1111')).toBe('2606:4700:4700::1111');
    expect(canonicalAddress('::127.0.0.1')).toBe('::7f00:1');
    expect(canonicalAddress('127.1')).toBeNull();
    expect(canonicalAddress('fe80::1%eth0')).toBeNull();
  });
});

// ---- Property-based: any address in a forbidden range, in any spelling, is refused. ----

const ipv4 = fc.integer({ min: 0, max: 0xffffffff });
const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const hex16 = (n: number) => [(n >>> 16).toString(16), (n & 0xffff).toString(16)];

/** IPv4 ranges to draw forbidden addresses from: [network, prefix length]. */
const FORBIDDEN_V4: Array<[string, number]> = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const toInt = (address: string) => address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
const forbiddenIpv4 = fc
  .tuple(fc.constantFrom(...FORBIDDEN_V4), fc.integer({ min: 0, max: 0xffffffff }))
  .map(([[network, prefix], host]) => (toInt(network) + (prefix === 32 ? 0 : host % 2 ** (32 - prefix))) >>> 0);

/** Every way a URL may spell IPv4 address `n`: decimal, octal or hex parts, 1 to 4 of them, a trailing dot. */
const urlIpv4Spelling = (n: number) =>
  fc
    .record({ parts: fc.integer({ min: 1, max: 4 }), bases: fc.array(fc.constantFrom(8, 10, 16), { minLength: 4, maxLength: 4 }), dot: fc.boolean(), upper: fc.boolean() })
    .map(({ parts, bases, dot, upper }) => {
      const bytes = [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
      // The last part holds all the bytes the earlier parts leave over.
      const values = [...bytes.slice(0, parts - 1), bytes.slice(parts - 1).reduce((v, b) => v * 256 + b, 0)];
      const written = values.map((v, i) => (bases[i] === 8 ? `0${v.toString(8)}` : bases[i] === 16 ? `0${upper ? 'X' : 'x'}${v.toString(16)}` : String(v)));
      return written.join('.') + (dot ? '.' : '');
    });

/** A spelling of the IPv6 address with these 8 groups: padded, upper case, compressed, a dotted tail. */
const ipv6Spelling = (groups: number[]) =>
  fc
    .record({
      pads: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
      upper: fc.boolean(),
      dottedTail: fc.boolean(),
      compress: fc.nat(),
    })
    .map(({ pads, upper, dottedTail, compress }) => {
      let parts = groups.map((g, i) => g.toString(16).padStart(Math.min(4, g.toString(16).length + pads[i]), '0'));
      if (upper) parts = parts.map((p) => p.toUpperCase());
      let zero = groups.map((g) => g === 0);
      if (dottedTail) {
        parts = [...parts.slice(0, 6), `${groups[6] >> 8}.${groups[6] & 255}.${groups[7] >> 8}.${groups[7] & 255}`];
        zero = [...zero.slice(0, 6), false];
      }
      // Replace part of one run of zero groups (if any) with '::'.
      const runs: Array<[number, number]> = [];
      for (let i = 0; i < parts.length; i++) {
        if (!zero[i]) continue;
        let j = i;
        while (j + 1 < parts.length && zero[j + 1]) j++;
        runs.push([i, j]);
        i = j;
      }
      if (runs.length === 0) return parts.join(':');
      const [start, end] = runs[compress % runs.length];
      const length = 1 + (compress % (end - start + 1));
      return `${parts.slice(0, start).join(':')}::${parts.slice(start + length).join(':')}`;
    });

const hex16ToBytes = (group: string) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 255];
const v6Groups = (prefix: number[], v4: number) => [...prefix, ...hex16(v4).map((h) => parseInt(h, 16))];
const MAPPED = [0, 0, 0, 0, 0, 0xffff];
const NAT64 = [0x64, 0xff9b, 0, 0, 0, 0];
const COMPATIBLE = [0, 0, 0, 0, 0, 0];

describe('SSRF guard: properties', () => {
  it('refuses any forbidden IPv4 address in any URL spelling', () => {
    fc.assert(
      fc.property(
        forbiddenIpv4.chain((n) => fc.tuple(fc.constant(n), urlIpv4Spelling(n))),
        ([n, spelling]) => {
          const host = new URL(`http://${spelling}/`).hostname;
          expect(host).toBe(dotted(n));
          expect(isForbiddenAddress(host)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('decides any IPv4 address the same in every URL spelling', () => {
    fc.assert(
      fc.property(
        ipv4.chain((n) => fc.tuple(fc.constant(n), urlIpv4Spelling(n))),
        ([n, spelling]) => isForbiddenAddress(new URL(`http://${spelling}/`).hostname) === isForbiddenAddress(dotted(n)),
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses any forbidden IPv4 address mapped, compatible or NAT64-embedded in any IPv6 spelling', () => {
    fc.assert(
      fc.property(
        forbiddenIpv4.chain((n) => fc.constantFrom(MAPPED, NAT64, COMPATIBLE).chain((prefix) => ipv6Spelling(v6Groups(prefix, n)))),
        (spelling) => {
          expect(isIP(spelling)).toBe(6);
          expect(isForbiddenAddress(spelling)).toBe(true);
          expect(isForbiddenAddress(new URL(`http://[${spelling}]/`).hostname.slice(1, -1))).toBe(true);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('decides an IPv4 address mapped into ::ffff: or 64:ff9b:: like the address itself', () => {
    fc.assert(
      fc.property(
        ipv4.chain((n) => fc.tuple(fc.constant(n), fc.constantFrom(MAPPED, NAT64).chain((prefix) => ipv6Spelling(v6Groups(prefix, n))))),
        ([n, spelling]) => isForbiddenAddress(spelling) === isForbiddenAddress(dotted(n)),
      ),
      { numRuns: 3000 },
    );
  });

  it('decides any IPv6 address the same in every spelling, and writes it one way', () => {
    const groups = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(
        groups.chain((g) => fc.tuple(fc.constant(g), ipv6Spelling(g), ipv6Spelling(g))),
        ([, a, b]) => {
          expect(isForbiddenAddress(a)).toBe(isForbiddenAddress(b));
          expect(canonicalAddress(a)).toBe(canonicalAddress(b));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('reads any IPv6 address as URLs do: its one spelling matches the WHATWG serialisation', () => {
    const groups = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 0xffff })), { minLength: 8, maxLength: 8 });
    fc.assert(
      fc.property(fc.oneof(fc.ipV6(), groups.chain(ipv6Spelling), ipv4.chain((n) => ipv6Spelling(v6Groups(MAPPED, n)))), (spelling) => {
        const written = new URL(`http://[${spelling}]/`).hostname.slice(1, -1);
        const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(written);
        const expected = mapped ? [...hex16ToBytes(mapped[1]), ...hex16ToBytes(mapped[2])].join('.') : written;
        expect(canonicalAddress(spelling)).toBe(expected);
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses every IPv4-compatible, 6to4, Teredo and local-use NAT64 address, whatever it embeds', () => {
    const tail = fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 });
    const tunnelled = fc.oneof(
      ipv4.map((n) => v6Groups(COMPATIBLE, n)),
      tail.map((t) => [0x2002, ...t.slice(1)]),
      tail.map((t) => [0x2001, 0, ...t.slice(2)]),
      tail.map((t) => [0x64, 0xff9b, 1, ...t.slice(3)]),
    );
    fc.assert(fc.property(tunnelled.chain(ipv6Spelling), (spelling) => isForbiddenAddress(spelling)), { numRuns: 3000 });
  });

  it('refuses any IPv6 address outside global unicast (2000::/3) that embeds no IPv4 address', () => {
    const outside = fc
      .array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 })
      .filter((g) => (g[0] & 0xe000) !== 0x2000)
      .filter((g) => !(g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff)) // IPv4-mapped
      .filter((g) => !(g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))); // NAT64
    fc.assert(
      fc.property(outside.chain(ipv6Spelling), (spelling) => isForbiddenAddress(spelling)),
      { numRuns: 3000 },
    );
  });

  it('refuses any address with a zone id', () => {
    const zone = fc.stringMatching(/^[0-9a-zA-Z.-]{1,10}$/);
    const address = fc.oneof(ipv4.map(dotted), fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }).chain(ipv6Spelling));
    fc.assert(fc.property(address, zone, (a, z) => isForbiddenAddress(`${a}%${z}`)), { numRuns: 2000 });
  });

  it('refuses anything a socket would not take as an address', () => {
    const nearAddress = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEFx.:%[] '), maxLength: 45 });
    fc.assert(
      fc.property(fc.oneof(fc.string(), nearAddress), (text) => isIP(text) !== 0 || isForbiddenAddress(text)),
      { numRuns: 5000 },
    );
  });
});
