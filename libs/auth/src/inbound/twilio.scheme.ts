import { decodeSignature, hmac, sameBytes, sha256 } from './mac';
import { inboundRefusal } from './inbound-refusal';
import { optionalHeader, singleHeader } from './inbound-request';
import { anyHeader, utf8Key } from './scheme-rule';
import type { SchemeRule } from './scheme-rule';
import { signedUrl } from './signed-url';

const SIGNATURE = 'x-twilio-signature';

/**
 * Twilio: `X-Twilio-Signature: <base64 HMAC-SHA1>` keyed with the account's auth token, over the URL
 * Twilio called (rebuilt from PUBLIC_BASE_URL; with and without the default port, as Twilio's own
 * validator tries) followed, for a form body, by every parameter name and value sorted by name (a
 * repeated name's distinct values sorted). A JSON body is signed through the URL: it carries `bodySHA256`,
 * the hex SHA-256 of the body, checked too. `X-Twilio-Webhooks-Signature-Settings` may ask for HMAC-SHA256.
 * `I-Twilio-Idempotency-Token` names the delivery (its retries keep it).
 */
export const twilioScheme: SchemeRule<{ scheme: 'twilio'; secret: string }> = {
  credentialHeaders: () => [SIGNATURE],
  claimedBy: (request) => anyHeader(request, [SIGNATURE]),
  signsBody: true,
  mismatch: 'bad_signature',
  keyOf: utf8Key,
  read(request) {
    const signature = decodeSignature(singleHeader(request, 'X-Twilio-Signature', 'twilio'), 'base64');
    if (signature === null) throw inboundRefusal('bad_signature', 'The X-Twilio-Signature header must be a base64 HMAC.', 'twilio');
    const algorithm = algorithmOf(optionalHeader(request, 'x-twilio-webhooks-signature-settings'));
    if (algorithm === null) throw inboundRefusal('bad_signature', 'X-Twilio-Webhooks-Signature-Settings names an algorithm other than HMAC_SHA1 and HMAC_SHA256.', 'twilio');
    const url = signedUrl(request, 'twilio');
    const candidates = [withoutPort(url), withDefaultPort(url)];
    const bodyHash = new URL(url).searchParams.get('bodySHA256');
    const isForm = (request.header('content-type')[0] ?? '').split(';')[0].trim().toLowerCase() === 'application/x-www-form-urlencoded';
    return {
      signedBy: (key, body) => {
        if (bodyHash !== null && !sameBytes(Buffer.from(sha256(body).toString('hex')), Buffer.from(bodyHash.toLowerCase()))) return false;
        const params = bodyHash === null && isForm ? sortedParams(body.toString('utf8')) : '';
        return candidates.some((candidate) => sameBytes(hmac(algorithm, key, candidate, params), signature));
      },
      deliveryId: () => optionalHeader(request, 'i-twilio-idempotency-token'),
    };
  },
};

function algorithmOf(settings: string | null): 'sha1' | 'sha256' | null {
  const named = /(?:^|,)\s*algorithm\s*=\s*([^,\s]+)/i.exec(settings ?? '')?.[1]?.toUpperCase();
  if (named === undefined || named === 'HMAC_SHA1') return 'sha1';
  return named === 'HMAC_SHA256' ? 'sha256' : null;
}

/** The form parameters as Twilio signs them: name and value of each, names sorted, a name's distinct values sorted. */
function sortedParams(form: string): string {
  const byName = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(form)) {
    const values = byName.get(name) ?? new Set<string>();
    values.add(value);
    byName.set(name, values);
  }
  let text = '';
  for (const name of [...byName.keys()].sort()) for (const value of [...(byName.get(name) as Set<string>)].sort()) text += name + value;
  return text;
}

const AUTHORITY = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is;

function withoutPort(url: string): string {
  const match = AUTHORITY.exec(url);
  if (!match) return url;
  const [, scheme, authority, rest] = match;
  const portAt = authority.indexOf(':', authority.lastIndexOf(']') + 1);
  return scheme + (portAt === -1 ? authority : authority.slice(0, portAt)) + rest;
}

function withDefaultPort(url: string): string {
  const match = AUTHORITY.exec(url);
  if (!match) return url;
  const [, scheme, authority, rest] = match;
  if (authority.indexOf(':', authority.lastIndexOf(']') + 1) !== -1) return url;
  return `${scheme}${authority}${scheme.toLowerCase() === 'https://' ? ':443' : ':80'}${rest}`;
}
