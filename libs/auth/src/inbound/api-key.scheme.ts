import { sameSecret } from './mac';
import { optionalHeader, singleHeader } from './inbound-request';
import { anyHeader, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

/** An API key sent as it is in a named header (`X-API-Key` by default), compared in constant time with the secret's value. */
export const apiKeyScheme: SchemeRule<{ scheme: 'api-key'; secret: string; header: string; deliveryIdHeader?: string }> = {
  credentialHeaders: (auth) => [auth.header.toLowerCase()],
  claimedBy: (request, auth) => anyHeader(request, [auth.header.toLowerCase()]),
  signsBody: false,
  mismatch: 'unknown_key',
  keyOf: utf8Key,
  read(request, auth) {
    const key = Buffer.from(singleHeader(request, auth.header, 'api-key'), 'utf8');
    return {
      signedBy: (secret) => sameSecret(key, secret),
      deliveryId: () => (auth.deliveryIdHeader === undefined ? null : optionalHeader(request, auth.deliveryIdHeader)),
    };
  },
};
