import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { optionalHeader, singleHeader } from './inbound-request';
import { anyHeader, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

const SIGNATURE = 'x-hub-signature-256';

/**
 * GitHub: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`, keyed with the webhook's secret;
 * `X-GitHub-Delivery` names the delivery (a redelivery keeps it). Nothing signs a time.
 */
export const githubScheme: SchemeRule<{ scheme: 'github'; secret: string }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request) {
    const header = singleHeader(request, 'X-Hub-Signature-256', 'github');
    const signature = header.startsWith('sha256=') ? decodeSignature(header.slice('sha256='.length), 'hex') : null;
    if (signature === null) throw inboundRefusal('bad_signature', 'The X-Hub-Signature-256 header must be sha256= and a hex HMAC-SHA256.', 'github');
    return {
      signedBy: (key, body) => sameBytes(hmac('sha256', key, body), signature),
      deliveryId: () => optionalHeader(request, 'x-github-delivery'),
    };
  },
};
