import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { singleHeader, timestampWithin } from './inbound-request';
import { anyHeader, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';
import { signedUrl } from './signed-url';

const SIGNATURE = 'x-hubspot-signature-v3';

/** The escapes HubSpot decodes in the URI it signs (its "validating requests" guide); every other escape stays. */
const DECODED = /%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi;

/**
 * HubSpot webhooks v3: `X-HubSpot-Signature-v3: <base64 HMAC-SHA256 of method + URI + body + timestamp>`
 * keyed with the app's client secret; `X-HubSpot-Request-Timestamp` in milliseconds. The URI is the one
 * HubSpot called, rebuilt from PUBLIC_BASE_URL. Retries carry the same events (their `attemptNumber`
 * grows), so the delivery is named by the events' ids.
 */
export const hubspotV3Scheme: SchemeRule<{ scheme: 'hubspot-v3'; secret: string; toleranceSeconds: number }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request, auth) {
    const signature = decodeSignature(singleHeader(request, 'X-HubSpot-Signature-v3', 'hubspot-v3'), 'base64');
    if (signature === null) throw inboundRefusal('bad_signature', 'The X-HubSpot-Signature-v3 header must be a base64 HMAC-SHA256.', 'hubspot-v3');
    const timestamp = timestampWithin(singleHeader(request, 'X-HubSpot-Request-Timestamp', 'hubspot-v3'), 'ms', auth.toleranceSeconds, request, 'hubspot-v3', 'X-HubSpot-Request-Timestamp');
    const uri = signedUrl(request, 'hubspot-v3').replace(DECODED, (escape) => decodeURIComponent(escape));
    return {
      signedBy: (key, body) => sameBytes(hmac('sha256', key, request.method, uri, body, timestamp), signature),
      deliveryId: (body) => eventIdsOf(body),
    };
  },
};

/** The delivery of a HubSpot batch: its events' ids, in order (`eventId` of each, or of the one object sent). */
function eventIdsOf(body: Buffer): string | null {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return null;
  }
  const events = Array.isArray(value) ? value : [value];
  const ids = events.map((event) => (event !== null && typeof event === 'object' ? (event as { eventId?: unknown }).eventId : undefined));
  if (ids.length === 0 || !ids.every((id) => (typeof id === 'number' && Number.isSafeInteger(id)) || (typeof id === 'string' && id !== ''))) return null;
  return `events:${ids.join(',')}`;
}
