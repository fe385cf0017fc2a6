import type { KeyedInboundAuth } from '@gi/domain';
import type { InboundRequest } from './inbound-request';

/**
 * The rule of one inbound scheme (docs/inbound.md): which headers carry its credential, how it reads them
 * and what a key must have signed. One module per scheme; the table is inbound-schemes.ts.
 */
export interface SchemeRule<A extends KeyedInboundAuth = KeyedInboundAuth> {
  /** The headers (lower case) whose values are the credential: never stored in RequestHeaders. */
  credentialHeaders(auth: A): readonly string[];
  /** Whether the call presents this scheme's credential at all (else it is missing, or a bearer call). */
  claimedBy(request: InboundRequest, auth: A): boolean;
  /** True when the signature covers the body, which is then checked once read; false: the headers alone. */
  readonly signsBody: boolean;
  /** A credential that matches no key: a bad signature, or (a key sent as it is) an unknown key. */
  readonly mismatch: 'bad_signature' | 'unknown_key';
  /** The key a secret's value holds: its UTF-8 bytes unless the scheme says otherwise; null when the value is no key of it. */
  keyOf(value: string): Buffer | null;
  /**
   * Reads the headers: refuses what is missing, repeated or malformed, and a signed time outside the
   * tolerance, before anything of the body is read. Returns what a key must have signed.
   */
  read(request: InboundRequest, auth: A): SignedCall;
}

/** A call whose headers passed: checks a key against it, and names its delivery. */
export interface SignedCall {
  /** Whether `key` made the signature over this body (or, for a key sent as it is, is that key). */
  signedBy(key: Buffer, body: Buffer): boolean;
  /** The producer's delivery id, if it sent one (kept only when acceptableDeliveryId). */
  deliveryId(body: Buffer): string | null;
}

/** The key of most schemes: the secret's text as UTF-8 bytes. */
export const utf8Key = (value: string): Buffer => Buffer.from(value, 'utf8');

/** Whether any of the headers was sent. */
export const anyHeader = (request: InboundRequest, names: readonly string[]): boolean => names.some((name) => request.header(name).length > 0);

/** A field of a JSON body's top-level object (Stripe's event id, Slack's event_id), read once the signature matched; null when there is none. */
export function jsonField(body: Buffer, field: string): unknown {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[field] : undefined;
  } catch {
    return undefined;
  }
}

export const stringOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : null);
