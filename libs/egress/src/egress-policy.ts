import { isIP } from 'node:net';

/**
 * Which addresses the service may connect to on a tenant's behalf. Connectors and callbacks run for
 * many bots on the service's own network, so only public addresses are allowed, whatever name,
 * redirect or spelling leads to them. Every address is read into its bytes once and judged on those,
 * so no spelling (padded, upper case, compressed, a dotted tail) can slip past a pattern.
 */

/** An IP address as a socket reads it: 4 bytes for IPv4, 16 for IPv6. */
type AddressBytes = Uint8Array;

/**
 * The bytes of `text` if a socket would take it as an address: dotted-decimal IPv4 or any IPv6 spelling
 * `net.isIP` accepts. Null for anything else, zone ids included: they only scope link-local addresses.
 */
function parseAddress(text: string): AddressBytes | null {
  if (text.includes('%')) return null;
  const family = isIP(text);
  if (family === 4) return Uint8Array.from(text.split('.'), Number);
  if (family !== 6) return null;
  const bytesOf = (group: string) => {
    if (group.includes('.')) return [...parseAddress(group)!]; // a dotted tail: the last 4 bytes
    const word = parseInt(group, 16);
    return [word >> 8, word & 255];
  };
  const groups = (part: string) => (part === '' ? [] : part.split(':').flatMap(bytesOf));
  const [head, tail] = text.split('::');
  const before = groups(head);
  const after = tail === undefined ? [] : groups(tail);
  return Uint8Array.from([...before, ...new Array<number>(16 - before.length - after.length).fill(0), ...after]);
}

interface Range {
  network: AddressBytes;
  bits: number;
}

const range = (cidr: string): Range => {
  const [network, bits] = cidr.split('/');
  return { network: parseAddress(network)!, bits: Number(bits) };
};

function within(address: AddressBytes, { network, bits }: Range): boolean {
  if (address.length !== network.length) return false;
  for (let i = 0; i * 8 < bits; i++) {
    const mask = (0xff << Math.max(0, 8 - (bits - i * 8))) & 0xff;
    if ((address[i] & mask) !== (network[i] & mask)) return false;
  }
  return true;
}

/** IPv4 ranges that are not public (IANA special-purpose registry). */
const NOT_PUBLIC_V4 = [
  '0.0.0.0/8', // "this network"
  '10.0.0.0/8',
  '100.64.0.0/10', // carrier-grade NAT; also some cloud metadata (100.100.100.200)
  '127.0.0.0/8',
  '169.254.0.0/16', // link-local, cloud metadata 169.254.169.254
  '172.16.0.0/12',
  '192.0.0.0/24',
  '192.0.2.0/24',
  '192.88.99.0/24',
  '192.168.0.0/16',
  '198.18.0.0/15',
  '198.51.100.0/24',
  '203.0.113.0/24',
  '224.0.0.0/4', // multicast
  '240.0.0.0/4', // reserved and broadcast
].map(range);

/** IPv4-mapped IPv6: a dual-stack socket connects to the IPv4 address in its last 4 bytes. */
const IPV4_MAPPED = range('::ffff:0:0/96');
/** IPv6 addresses that reach the IPv4 address in their last 4 bytes, and are judged as that address. */
const REACHING_IPV4 = [IPV4_MAPPED, range('64:ff9b::/96') /* NAT64 well-known prefix: the translator connects to it */];

/**
 * Only global unicast IPv6 is public. Outside it: unspecified, loopback, IPv4-compatible (::/96) and
 * -translated, local-use NAT64 (64:ff9b:1::/48), discard, unique local (fd00:ec2::254 metadata),
 * link-local, site-local, multicast.
 */
const GLOBAL_UNICAST = range('2000::/3');
const NOT_PUBLIC_V6 = [
  '2001::/23', // IETF protocol assignments, Teredo (2001::/32) among them
  '2001:db8::/32', // documentation
  '2002::/16', // 6to4: tunnels to any IPv4 address
  '3fff::/20', // documentation
].map(range);

function isForbidden(address: AddressBytes): boolean {
  if (address.length === 4) return NOT_PUBLIC_V4.some((r) => within(address, r));
  if (REACHING_IPV4.some((r) => within(address, r))) return isForbidden(address.subarray(12));
  return !within(address, GLOBAL_UNICAST) || NOT_PUBLIC_V6.some((r) => within(address, r));
}

/**
 * Loopback: 127.0.0.0/8 and ::1, and an IPv4-mapped 127.x.x.x (a dual-stack socket connects to it the
 * same way). Not NAT64: a translator would connect to its own loopback, not this host's.
 */
const LOOPBACK = [range('127.0.0.0/8'), range('::1/128')];

/** True when `address` is this host's loopback; `0.0.0.0` and `::` are not (they are refused as "this network"). */
export function isLoopbackAddress(address: string): boolean {
  const bytes = parseAddress(address);
  if (bytes === null) return false;
  const reached = bytes.length === 16 && within(bytes, IPV4_MAPPED) ? bytes.subarray(12) : bytes;
  return LOOPBACK.some((r) => within(reached, r));
}

/** True when the service may not connect to `address` (an IP address as DNS or a URL host gives it). */
export function isForbiddenAddress(address: string): boolean {
  const bytes = parseAddress(address);
  return bytes === null || isForbidden(bytes);
}

/**
 * `address` in one spelling, so two spellings of the same destination compare equal: dotted IPv4, the
 * short lower-case IPv6 form (RFC 5952), and an IPv4-mapped address as the IPv4 address it reaches.
 * Null when it is not an address.
 */
export function canonicalAddress(address: string): string | null {
  const bytes = parseAddress(address);
  if (bytes === null) return null;
  if (bytes.length === 16 && within(bytes, IPV4_MAPPED)) return bytes.subarray(12).join('.');
  if (bytes.length === 4) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  // The longest run of two or more zero groups (the first of equals) becomes '::'.
  let start = -1;
  let length = 1;
  for (let i = 0; i < 8; i++) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > length) [start, length] = [i, j - i];
    i = j;
  }
  const hex = (part: number[]) => part.map((g) => g.toString(16)).join(':');
  return start < 0 ? hex(groups) : `${hex(groups.slice(0, start))}::${hex(groups.slice(start + length))}`;
}

