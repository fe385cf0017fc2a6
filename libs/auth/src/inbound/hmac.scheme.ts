import type { HmacAlgorithm, HmacEncoding } from '@gi/domain';
import { DEFAULT_TOLERANCE_SECONDS } from '@gi/domain';
import { decodeSignature, hmac, sameBytes } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { optionalHeader, singleHeader, timestampWithin } from './inbound-request';
import { anyHeader, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

interface HmacAuth {
  scheme: 'hmac';
  secret: string;
  header: string;
  algorithm: HmacAlgorithm;
  encoding: HmacEncoding;
  prefix?: string;
  timestampHeader?: string;
  toleranceSeconds?: number;
  deliveryIdHeader?: string;
}

/**
 * A producer's own HMAC (Convoy's "hmac" verifier, and most in-house senders): the named header holds
 * `<prefix><hex or base64 HMAC>` of the body, or, with a timestamp header, of `<timestamp>.<body>`
 * (then refused outside the tolerance). A delivery id header, when named, deduplicates.
 */
export const hmacScheme: SchemeRule<HmacAuth> = {
  credentialHeaders: (auth) => [auth.header.toLowerCase()],
  claimedBy: (request, auth) => anyHeader(request, [auth.header.toLowerCase()]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request, auth) {
    const prefix = auth.prefix ?? '';
    const header = singleHeader(request, auth.header, 'hmac');
    const signature = header.startsWith(prefix) ? decodeSignature(header.slice(prefix.length), auth.encoding) : null;
    if (signature === null) throw inboundRefusal('bad_signature', `The ${auth.header} header must be ${prefix ? `${prefix} and ` : ''}a ${auth.encoding} HMAC-${auth.algorithm.toUpperCase()}.`, 'hmac');
    const timestamp =
      auth.timestampHeader === undefined
        ? null
        : timestampWithin(singleHeader(request, auth.timestampHeader, 'hmac'), 's', auth.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS, request, 'hmac', auth.timestampHeader);
    return {
      signedBy: (key, body) => sameBytes(timestamp === null ? hmac(auth.algorithm, key, body) : hmac(auth.algorithm, key, `${timestamp}.`, body), signature),
      deliveryId: () => (auth.deliveryIdHeader === undefined ? null : optionalHeader(request, auth.deliveryIdHeader)),
    };
  },
};
