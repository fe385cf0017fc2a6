import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { optionalHeader, singleHeader } from './inbound-request';
import { anyHeader, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

const SIGNATURE = 'x-shopify-hmac-sha256';

/**
 * Shopify: `X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256 of the body>`, keyed with the app's client secret
 * (Shopify's documented recipe); `X-Shopify-Webhook-Id` names the delivery (its retries keep it).
 */
export const shopifyScheme: SchemeRule<{ scheme: 'shopify'; secret: string }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request) {
    const signature = decodeSignature(singleHeader(request, 'X-Shopify-Hmac-Sha256', 'shopify'), 'base64');
    if (signature === null) throw inboundRefusal('bad_signature', 'The X-Shopify-Hmac-Sha256 header must be a base64 HMAC-SHA256.', 'shopify');
    return {
      signedBy: (key, body) => sameBytes(hmac('sha256', key, body), signature),
      deliveryId: () => optionalHeader(request, 'x-shopify-webhook-id'),
    };
  },
};
