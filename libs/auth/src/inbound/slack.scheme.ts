import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { singleHeader, timestampWithin } from './inbound-request';
import { anyHeader, jsonField, stringOrNull, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

const SIGNATURE = 'x-slack-signature';

/**
 * Slack: `X-Slack-Signature: v0=<hex HMAC-SHA256 of "v0:<timestamp>:<body>">` keyed with the app's signing
 * secret, `X-Slack-Request-Timestamp` in seconds. A retry (`X-Slack-Retry-Num`) is signed anew but
 * carries the same Events API body, whose `event_id` names the delivery.
 */
export const slackScheme: SchemeRule<{ scheme: 'slack'; secret: string; toleranceSeconds: number }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request, auth) {
    const header = singleHeader(request, 'X-Slack-Signature', 'slack');
    const signature = header.startsWith('v0=') ? decodeSignature(header.slice(3), 'hex') : null;
    if (signature === null) throw inboundRefusal('bad_signature', 'The X-Slack-Signature header must be v0= and a hex HMAC-SHA256.', 'slack');
    const timestamp = timestampWithin(singleHeader(request, 'X-Slack-Request-Timestamp', 'slack'), 's', auth.toleranceSeconds, request, 'slack', 'X-Slack-Request-Timestamp');
    return {
      signedBy: (key, body) => sameBytes(hmac('sha256', key, `v0:${timestamp}:`, body), signature),
      deliveryId: (body) => stringOrNull(jsonField(body, 'event_id')),
    };
  },
};
