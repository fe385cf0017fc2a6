import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { singleHeader, timestampWithin } from './inbound-request';
import { anyHeader, jsonField, stringOrNull, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

const SIGNATURE = 'stripe-signature';
/** More entries than any real header has (Stripe sends one v1 per active secret): a header past it is refused unread. */
const MAX_ENTRIES = 32;

/**
 * Stripe: `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>...][,v0=...]`, each v1 the HMAC-SHA256 of
 * `<t>.<body>` keyed with the endpoint's signing secret (`whsec_...`, used as text); any v1 may match
 * (Stripe signs with every secret of a rotation). The delivery is the event's `id` in the body.
 */
export const stripeScheme: SchemeRule<{ scheme: 'stripe'; secret: string; toleranceSeconds: number }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request, auth) {
    const header = singleHeader(request, 'Stripe-Signature', 'stripe');
    const entries = header.split(',');
    let timestamp: string | null = null;
    const signatures: Buffer[] = [];
    if (entries.length <= MAX_ENTRIES) {
      for (const entry of entries) {
        const eq = entry.indexOf('=');
        const name = entry.slice(0, eq).trim();
        const value = entry.slice(eq + 1).trim();
        if (eq === -1) continue;
        if (name === 't') timestamp = timestamp === null ? value : '';
        else if (name === 'v1') {
          const bytes = decodeSignature(value, 'hex');
          if (bytes) signatures.push(bytes);
        }
      }
    }
    if (!timestamp || signatures.length === 0) {
      throw inboundRefusal('bad_signature', 'The Stripe-Signature header must hold one t= and at least one hex v1= signature.', 'stripe');
    }
    const t = timestampWithin(timestamp, 's', auth.toleranceSeconds, request, 'stripe', 'Stripe-Signature t');
    return {
      signedBy: (key, body) => {
        const expected = hmac('sha256', key, `${t}.`, body);
        return signatures.some((signature) => sameBytes(expected, signature));
      },
      deliveryId: (body) => stringOrNull(jsonField(body, 'id')),
    };
  },
};
