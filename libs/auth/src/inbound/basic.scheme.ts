import { sameSecret } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { optionalHeader, singleHeader } from './inbound-request';
import { utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/**
 * HTTP Basic auth (RFC 7617): `Authorization: Basic <base64 of user:password>`, compared in constant time
 * with the secret's value, `user:password`. Nothing of the body is signed: checked on the headers alone.
 */
export const basicScheme: SchemeRule<{ scheme: 'basic'; secret: string; deliveryIdHeader?: string }> = {
  credentialHeaders: () => ['authorization'],
  claimedBy: (request) => request.header('authorization').some((value) => /^basic /i.test(value.trim())),
  signsBody: false,
  mismatch: 'unknown_key',
  keyOf: utf8Key,
  read(request, auth) {
    const match = BASIC.exec(singleHeader(request, 'Authorization', 'basic'));
    if (!match) throw inboundRefusal('bad_signature', 'The Authorization header must be "Basic " and the base64 of user:password.', 'basic');
    const credentials = Buffer.from(match[1], 'base64');
    return {
      signedBy: (key) => sameSecret(credentials, key),
      deliveryId: () => (auth.deliveryIdHeader === undefined ? null : optionalHeader(request, auth.deliveryIdHeader)),
    };
  },
};
