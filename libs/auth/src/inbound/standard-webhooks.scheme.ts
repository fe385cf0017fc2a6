import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { singleHeader, timestampWithin } from './inbound-request';
import { anyHeader } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

const SIGNATURE = 'webhook-signature';
/** More signatures than a rotation ever has at once: a header past it is refused unread. */
const MAX_SIGNATURES = 32;

/**
 * Standard Webhooks (standardwebhooks.com; Svix and many senders): `webhook-id`, `webhook-timestamp`
 * (seconds) and `webhook-signature`, space-separated `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`
 * entries; the key is the base64 after `whsec_`. Entries of other versions (`v1a`, asymmetric) are
 * skipped. `webhook-id` names the delivery, and is signed.
 */
export const standardWebhooksScheme: SchemeRule<{ scheme: 'standard-webhooks'; secret: string; toleranceSeconds: number }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: (value) => decodeSignature(value.trim().replace(/^whsec_/, ''), 'base64'),
  read(request, auth) {
    const entries = singleHeader(request, 'webhook-signature', 'standard-webhooks').split(' ');
    const signatures: Buffer[] = [];
    if (entries.length <= MAX_SIGNATURES) {
      for (const entry of entries) {
        const comma = entry.indexOf(',');
        if (entry.slice(0, comma) !== 'v1') continue;
        const bytes = decodeSignature(entry.slice(comma + 1), 'base64');
        if (bytes) signatures.push(bytes);
      }
    }
    if (signatures.length === 0) throw inboundRefusal('bad_signature', 'The webhook-signature header holds no v1,<base64> signature.', 'standard-webhooks');
    const id = singleHeader(request, 'webhook-id', 'standard-webhooks');
    const timestamp = timestampWithin(singleHeader(request, 'webhook-timestamp', 'standard-webhooks'), 's', auth.toleranceSeconds, request, 'standard-webhooks', 'webhook-timestamp');
    return {
      signedBy: (key, body) => {
        const expected = hmac('sha256', key, `${id}.${timestamp}.`, body);
        return signatures.some((signature) => sameBytes(expected, signature));
      },
      deliveryId: () => id,
    };
  },
};

