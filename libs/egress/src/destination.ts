import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { canonicalAddress, isForbiddenAddress, isLoopbackAddress } from './egress-policy';

/** A destination the egress policy refuses; the message says why and is safe to show. */
export class EgressRefused extends Error {
  constructor(
    message: string,
    /** Every address refused was loopback: trusting loopback (`EgressTrust.loopback`) would let it through. */
    readonly loopback = false,
  ) {
    super(message);
  }
}

/** Destinations a request may reach although the policy refuses them. */
export interface EgressTrust {
  /** These addresses, in any spelling (`CONNECTOR_TRUSTED_ADDRESSES`, `CALLBACK_TRUSTED_ADDRESSES`). */
  addresses: readonly string[];
  /**
   * Every loopback address (127.0.0.0/8, ::1), and no other private one: a local run against a mock
   * API on the author's machine (`gi connector run --trust-loopback`). Never set in the service.
   */
  loopback?: boolean;
}

/** The address a request connects to, checked against the policy. */
export interface Destination {
  address: string;
  family: 4 | 6;
}

/** Every address a host name resolves to (the system resolver; tests give their own). */
export type ResolveHost = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

const systemResolver: ResolveHost = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/**
 * Resolves a URL's host name to an address the service may connect to on a tenant's behalf: a literal
 * address, or every address the name resolves to, must be public (see egress-policy), unless `trust`
 * vouches for it (local test servers, an internal ERP the operator vouches for). Trusted addresses
 * match in any spelling of the same destination (`::ffff:127.0.0.1` is `127.0.0.1`).
 */
export async function resolveDestination(hostname: string, trust: EgressTrust, resolve = systemResolver): Promise<Destination> {
  const host = hostname.replace(/^\[|\]$/g, '');
  const trusted = new Set(trust.addresses.map(canonicalAddress).filter((address): address is string => address !== null));
  const permitted = (address: string) =>
    trusted.has(canonicalAddress(address) ?? '') || (trust.loopback === true && isLoopbackAddress(address)) || !isForbiddenAddress(address);
  const literal = isIP(host);
  if (literal) {
    if (!permitted(host)) throw new EgressRefused(`The address ${host} is private, loopback or link-local and cannot be requested.`, isLoopbackAddress(host));
    return { address: host, family: literal as 4 | 6 };
  }
  let found: Array<{ address: string; family: number }>;
  try {
    found = await resolve(host);
  } catch {
    throw new EgressRefused(`The host '${host}' could not be resolved.`);
  }
  const refused = found.filter((entry) => !permitted(entry.address));
  if (found.length === 0 || refused.length > 0) {
    throw new EgressRefused(
      `The host '${host}' resolves to a private, loopback or link-local address and cannot be requested.`,
      refused.length > 0 && refused.every((entry) => isLoopbackAddress(entry.address)),
    );
  }
  return { address: found[0].address, family: found[0].family === 6 ? 6 : 4 };
}

/** A DNS lookup that always answers the checked destination, so a name cannot re-resolve elsewhere. */
export function pinnedLookup(destination: Destination): LookupFunction {
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [destination]);
    else callback(null, destination.address, destination.family);
  }) as unknown as LookupFunction;
}
