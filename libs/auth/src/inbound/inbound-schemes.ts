import { acceptableDeliveryId } from '@gi/domain';
import type { InboundAuth, KeyedInboundAuth, VerifiedInbound } from '@gi/domain';
import { apiKeyScheme } from './api-key.scheme';
import { basicScheme } from './basic.scheme';
import { githubScheme } from './github.scheme';
import { hmacScheme } from './hmac.scheme';
import { hubspotV3Scheme } from './hubspot-v3.scheme';
import { inboundRefusal } from './inbound-refusal';
import type { InboundRequest } from './inbound-request';
import type { SchemeRule } from './scheme-rule';
import { shopifyScheme } from './shopify.scheme';
import { slackScheme } from './slack.scheme';
import { standardWebhooksScheme } from './standard-webhooks.scheme';
import { stripeScheme } from './stripe.scheme';
import { twilioScheme } from './twilio.scheme';

type Rules = { [S in KeyedInboundAuth['scheme']]: SchemeRule<Extract<KeyedInboundAuth, { scheme: S }>> };

/** Every inbound scheme but bearer, by name: the one place a scheme's rule is looked up. */
export const SCHEME_RULES: Readonly<Rules> = Object.freeze({
  github: githubScheme,
  stripe: stripeScheme,
  shopify: shopifyScheme,
  slack: slackScheme,
  'hubspot-v3': hubspotV3Scheme,
  twilio: twilioScheme,
  'standard-webhooks': standardWebhooksScheme,
  hmac: hmacScheme,
  basic: basicScheme,
  'api-key': apiKeyScheme,
});

const ruleOf = <A extends KeyedInboundAuth>(auth: A): SchemeRule<A> => SCHEME_RULES[auth.scheme] as unknown as SchemeRule<A>;

/** The headers carrying an integration's credential (lower case): left out of RequestHeaders; none for bearer. */
export function credentialHeadersOf(auth: InboundAuth): ReadonlySet<string> | undefined {
  return auth.scheme === 'bearer' ? undefined : new Set(ruleOf(auth).credentialHeaders(auth));
}

/** Whether the scheme's check needs the body (it is signed), or is done on the headers alone (basic, api-key). */
export const signsBody = (auth: KeyedInboundAuth): boolean => ruleOf(auth).signsBody;

/** A call whose headers passed its integration's scheme: checked against the keys once its body is read. */
export interface SignedInbound {
  readonly signsBody: boolean;
  /**
   * Checks the call against the keys (the values of the integration's secrets, the current one first)
   * and the body as received (empty for a scheme that does not sign it). Refuses an unknown key (no
   * secret set) and a credential that matches none; returns what was verified.
   */
  verify(keys: readonly string[], body: Buffer): VerifiedInbound;
}

const EMPTY = Buffer.alloc(0);

/**
 * The first step of an integration's inbound check, on the request line and headers: `bearer` when the
 * call presents no credential of the scheme but a bot token the integration also accepts (the caller then
 * checks the token); otherwise the call's signed parts. Refuses (401, inbound-refusal.ts) a call with
 * no credential of the scheme (a bearer token alone included, unless allowed), and one whose headers are
 * repeated, malformed or signed outside the time tolerance: all before the body is read.
 */
export function readInbound(auth: KeyedInboundAuth, request: InboundRequest): 'bearer' | SignedInbound {
  const rule = ruleOf(auth);
  const allowBearer = auth.allowBearer === true;
  if (!rule.claimedBy(request, auth)) {
    const bearer = request.header('authorization').some((value) => /^bearer /i.test(value.trim()));
    if (bearer && allowBearer) return 'bearer';
    const expected = rule.credentialHeaders(auth).join(', ');
    const detail = bearer
      ? `This integration is called with ${auth.scheme} credentials (${expected}); a bearer token is not accepted.`
      : `This integration is called with ${auth.scheme} credentials: the ${expected} header is required.`;
    throw inboundRefusal('missing_signature', detail, auth.scheme, allowBearer);
  }
  const signed = rule.read(request, auth);
  return {
    signsBody: rule.signsBody,
    verify(keys, body) {
      const usable = keys.map((value) => rule.keyOf(value)).filter((key): key is Buffer => key !== null && key.length > 0);
      if (usable.length === 0) throw inboundRefusal('unknown_key', 'This integration has no key configured to check the call against.', auth.scheme, allowBearer);
      const checked = rule.signsBody ? body : EMPTY;
      if (!usable.some((key) => signed.signedBy(key, checked))) {
        const detail = rule.mismatch === 'unknown_key' ? 'The credential is not a key of this integration.' : 'The signature does not match the body as received with any key of this integration.';
        throw inboundRefusal(rule.mismatch, detail, auth.scheme, allowBearer);
      }
      return { scheme: auth.scheme, deliveryId: acceptableDeliveryId(signed.deliveryId(checked)) };
    },
  };
}
