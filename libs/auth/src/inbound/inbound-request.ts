import type { InboundScheme } from '@gi/domain';
import { inboundRefusal } from './inbound-refusal';

/** What a scheme reads of a webhook call before its body: its method, headers and the URL it was sent to. */
export interface InboundRequest {
  method: string;
  /**
   * The URL the producer called: PUBLIC_BASE_URL, then the path and query exactly as received. Null when
   * no public base URL is configured (the `Host` header is never trusted for it).
   */
  publicUrl: string | null;
  /** Every value of a header (`name` in lower case), one per header line as received. */
  header(name: string): readonly string[];
  /** The time of the check, epoch milliseconds. */
  nowMs: number;
}

/**
 * The one value of a header a scheme needs: refused as missing when absent (or empty), as bad when sent
 * more than once (a proxy or an attacker adding a second signature must not get to choose which counts).
 */
export function singleHeader(request: InboundRequest, name: string, scheme: InboundScheme): string {
  const values = request.header(name.toLowerCase());
  if (values.length === 0 || values[0].trim() === '') throw inboundRefusal('missing_signature', `The ${name} header is required.`, scheme);
  if (values.length > 1) throw inboundRefusal('bad_signature', `The ${name} header was sent more than once.`, scheme);
  return values[0].trim();
}

/** A header that may be absent (a delivery id): its one value, or null when absent, empty or repeated. */
export function optionalHeader(request: InboundRequest, name: string): string | null {
  const values = request.header(name.toLowerCase());
  return values.length === 1 && values[0].trim() !== '' ? values[0].trim() : null;
}

const DIGITS = /^\d{1,16}$/;

/**
 * A signed timestamp (whole seconds, or milliseconds for `unit` 'ms'), refused when malformed and when it
 * lies more than `toleranceSeconds` before or after now: an old one is a replay, a future one a clock
 * far off or a signature made to be replayed later.
 */
export function timestampWithin(text: string, unit: 's' | 'ms', toleranceSeconds: number, request: InboundRequest, scheme: InboundScheme, name: string): string {
  if (!DIGITS.test(text)) throw inboundRefusal('bad_signature', `The ${name} header is not a Unix time in ${unit === 's' ? 'seconds' : 'milliseconds'}.`, scheme);
  const atMs = unit === 's' ? Number(text) * 1000 : Number(text);
  if (Math.abs(request.nowMs - atMs) > toleranceSeconds * 1000) {
    throw inboundRefusal('timestamp_outside_tolerance', `The signed time (${name}) is more than ${toleranceSeconds} s away from the service's clock.`, scheme);
  }
  return text;
}
