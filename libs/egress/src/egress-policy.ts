import { BlockList, isIP } from 'node:net';

/**
 * Which addresses a connector's HTTP request may reach. Connectors run for many bots on the
 * service's own network, so loopback, private, link-local (cloud metadata), shared, reserved and
 * multicast ranges are refused whatever name leads to them.
 */
const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT; also some cloud metadata (100.100.100.200)
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata 169.254.169.254
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64: may embed any IPv4 address
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001::', 32], // Teredo
  ['2001:db8::', 32],
  ['2002::', 16], // 6to4: embeds an IPv4 address
  ['fc00::', 7], // unique local, incl. fd00:ec2::254 metadata
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  forbidden.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped or IPv4-compatible IPv6 address, if any. */
function embeddedIpv4(address: string): string | null {
  const match = /^(?:0{0,4}:){0,5}(?:ffff:)?((?:\d{1,3}\.){3}\d{1,3})$/i.exec(address.replace(/^::/, ''));
  if (match && isIP(match[1]) === 4) return match[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (hex) {
    const high = parseInt(hex[1], 16);
    const low = parseInt(hex[2], 16);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return null;
}

/** True when a connector may not connect to this IP address. */
export function isForbiddenAddress(address: string): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 4) return forbidden.check(bare, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse rather than guess
  const v4 = embeddedIpv4(bare.toLowerCase());
  if (v4) return forbidden.check(v4, 'ipv4');
  if (/^::ffff:/i.test(bare)) return true;
  return forbidden.check(bare, 'ipv6');
}

/**
 * True when `host` (a URL's hostname, lower case) is on the integration's list. An entry matches
 * itself exactly; `*.example.com` matches any name below example.com (not example.com itself).
 */
export function isAllowedHost(host: string, allowedHosts: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return allowedHosts.some((entry) => {
    const allowed = entry.trim().toLowerCase().replace(/\.$/, '');
    if (allowed.startsWith('*.')) return name.endsWith(allowed.slice(1)) && name.length > allowed.length - 1;
    return allowed !== '' && name === allowed;
  });
}
