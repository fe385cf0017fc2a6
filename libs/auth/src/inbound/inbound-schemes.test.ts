import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sign as githubSign, verify as githubVerify } from '@octokit/webhooks-methods';
import { Signature as HubSpotSignature } from '@hubspot/api-client/lib/src/utils/signature';
import { verifySlackRequest } from '@slack/bolt/dist/receivers/verify-request';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { getExpectedTwilioSignature, validateRequest as twilioValidate } from 'twilio/lib/webhooks/webhooks';
import type { KeyedInboundAuth } from '@gi/domain';
import { GiError } from '@gi/domain';
import { AuthRefusal } from '../bearer';
import { inboundRequest } from './inbound-request.fixture';
import { credentialHeadersOf, readInbound } from './inbound-schemes';

/**
 * Every inbound scheme against its provider's own library (the oracle makes the signature, or, for
 * Slack, checks ours), then every way a call must be refused: a tampered byte, the wrong secret, a
 * signed time too old and too new, a missing header, a header sent twice, a body re-encoded by a proxy,
 * a bearer token alone. Shopify publishes no library: its documented recipe (base64 HMAC-SHA256 of the
 * body with the app's secret) is the oracle.
 */

const NOW = 1_790_000_000_000;
const stripe = new Stripe('sk_test_oracle');
const PUBLIC_URL = 'https://hooks.example.com/api/Platform/acme/Deal/hook/GenericIntegration?source=crm';

type Headers = Array<[string, string]>;

interface Signed {
  headers: Headers;
  contentType?: string;
}

interface Case {
  auth: KeyedInboundAuth;
  /** The secret's value (and, for rotation, another). */
  secret: string;
  other: string;
  body: string;
  /** The signed headers of `body`, made by the provider's library, at `at` (epoch ms). */
  sign(body: string, secret: string, at: number): Promise<Signed> | Signed;
  /** The delivery id the call names. */
  deliveryId: string | null;
  /** The signed time, for schemes that have one. */
  timed: boolean;
  /** The header that carries the credential (its absence: missing; twice: bad). */
  credential: string;
}

const json = (value: unknown) => JSON.stringify(value, null, 1);
const standardKey = `whsec_${randomBytes(32).toString('base64')}`;
const otherStandardKey = `whsec_${randomBytes(32).toString('base64')}`;
const twilioForm = new URLSearchParams([
  ['To', '+15005550006'],
  ['Body', 'Hello é & co'],
  ['MediaUrl', 'https://b.example/2'],
  ['MediaUrl', 'https://a.example/1'],
]).toString();

const CASES: Record<KeyedInboundAuth['scheme'], Case> = {
  github: {
    auth: { scheme: 'github', secret: 'GITHUB_WEBHOOK_SECRET' },
    secret: 'It\u2019s a Secret to Everybody',
    other: 'another secret',
    body: json({ action: 'opened', number: 7 }),
    async sign(body, secret) {
      const signature = await githubSign(secret, body);
      expect(await githubVerify(secret, body, signature)).toBe(true);
      return { headers: [['X-Hub-Signature-256', signature], ['X-GitHub-Delivery', '72d3162e-cc78-11e3-81ab-4c9367dc0958'], ['X-GitHub-Event', 'pull_request']] };
    },
    deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    timed: false,
    credential: 'X-Hub-Signature-256',
  },
  stripe: {
    auth: { scheme: 'stripe', secret: 'STRIPE_WEBHOOK_SECRET', toleranceSeconds: 300 },
    secret: 'whsec_test_stripe_secret_0123456789',
    other: 'whsec_another_0123456789',
    body: json({ id: 'evt_1NG8Du2eZvKYlo2CUI79vXWy', object: 'event', type: 'payment_intent.succeeded' }),
    sign(body, secret, at) {
      const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: Math.floor(at / 1000) });
      return { headers: [['Stripe-Signature', header]] };
    },
    deliveryId: 'evt_1NG8Du2eZvKYlo2CUI79vXWy',
    timed: true,
    credential: 'Stripe-Signature',
  },
  shopify: {
    auth: { scheme: 'shopify', secret: 'SHOPIFY_CLIENT_SECRET' },
    secret: 'shpss_0123456789abcdef',
    other: 'shpss_fedcba9876543210',
    body: json({ id: 820982911946154508, email: 'jon@example.com' }),
    // Shopify's documented recipe: Base64(HMAC-SHA256(client secret, raw body)).
    sign: (body, secret) => ({
      headers: [['X-Shopify-Hmac-Sha256', createHmac('sha256', secret).update(body, 'utf8').digest('base64')], ['X-Shopify-Webhook-Id', 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043'], ['X-Shopify-Topic', 'orders/create']],
    }),
    deliveryId: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043',
    timed: false,
    credential: 'X-Shopify-Hmac-Sha256',
  },
  slack: {
    auth: { scheme: 'slack', secret: 'SLACK_SIGNING_SECRET', toleranceSeconds: 300 },
    secret: '8f742231b10e8888abcd99yyyzzz85a5',
    other: '00000000000000000000000000000000',
    body: json({ type: 'event_callback', event_id: 'Ev08MFMKH6', event: { type: 'app_mention' } }),
    // Slack's recipe; its own verifier (@slack/bolt) must accept the result before the service sees it.
    sign(body, secret, at) {
      const timestamp = Math.floor(at / 1000);
      const signature = `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
      if (Math.abs(at - NOW) < 60_000) verifySlackRequest({ signingSecret: secret, body, headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': timestamp }, nowMilliseconds: at });
      return { headers: [['X-Slack-Signature', signature], ['X-Slack-Request-Timestamp', String(timestamp)], ['X-Slack-Retry-Num', '1']] };
    },
    deliveryId: 'Ev08MFMKH6',
    timed: true,
    credential: 'X-Slack-Signature',
  },
  'hubspot-v3': {
    auth: { scheme: 'hubspot-v3', secret: 'HUBSPOT_CLIENT_SECRET', toleranceSeconds: 300 },
    secret: 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy',
    other: 'zzzzzzzz-zzzz-zzzz-zzzz-zzzzzzzzzzzz',
    body: json([
      { eventId: 100, subscriptionId: 4, portalId: 62515, occurredAt: 1564113600000, subscriptionType: 'contact.creation', attemptNumber: 0, objectId: 123 },
      { eventId: 101, subscriptionId: 4, portalId: 62515, occurredAt: 1564113600001, subscriptionType: 'contact.creation', attemptNumber: 0, objectId: 124 },
    ]),
    sign(body, secret, at) {
      const signature = HubSpotSignature.getSignature('POST', 'v3', { clientSecret: secret, url: PUBLIC_URL, requestBody: body, timestamp: at, signature: '' });
      return { headers: [['X-HubSpot-Signature-v3', signature], ['X-HubSpot-Request-Timestamp', String(at)], ['X-HubSpot-Signature-Version', 'v3']] };
    },
    deliveryId: 'events:100,101',
    timed: true,
    credential: 'X-HubSpot-Signature-v3',
  },
  twilio: {
    auth: { scheme: 'twilio', secret: 'TWILIO_AUTH_TOKEN' },
    secret: '12345abcde12345abcde12345abcde12',
    other: 'abcde12345abcde12345abcde12345ab',
    body: twilioForm,
    sign(body, secret) {
      const params: Record<string, string | string[]> = {};
      for (const [name, value] of new URLSearchParams(body)) params[name] = name in params ? [params[name]].flat().concat(value) : value;
      const signature = getExpectedTwilioSignature(secret, PUBLIC_URL, params);
      expect(twilioValidate(secret, signature, PUBLIC_URL, params)).toBe(true);
      return { headers: [['X-Twilio-Signature', signature], ['I-Twilio-Idempotency-Token', 'c0f8a7e2-5b6d-4a3e-9f1c-2d3e4f5a6b7c']], contentType: 'application/x-www-form-urlencoded' };
    },
    deliveryId: 'c0f8a7e2-5b6d-4a3e-9f1c-2d3e4f5a6b7c',
    timed: false,
    credential: 'X-Twilio-Signature',
  },
  'standard-webhooks': {
    auth: { scheme: 'standard-webhooks', secret: 'SVIX_SECRET', toleranceSeconds: 300 },
    secret: standardKey,
    other: otherStandardKey,
    body: json({ type: 'invoice.paid', data: { id: 'in_1' } }),
    sign(body, secret, at) {
      const id = 'msg_2LJZ4XU4rZ7Dwc3F1E3bE6u9iC1';
      return { headers: [['webhook-id', id], ['webhook-timestamp', String(Math.floor(at / 1000))], ['webhook-signature', new StandardWebhook(secret).sign(id, new Date(at), body)]] };
    },
    deliveryId: 'msg_2LJZ4XU4rZ7Dwc3F1E3bE6u9iC1',
    timed: true,
    credential: 'webhook-signature',
  },
  hmac: {
    auth: { scheme: 'hmac', secret: 'PARTNER_KEY', header: 'X-Partner-Signature', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=', timestampHeader: 'X-Partner-Time', toleranceSeconds: 120, deliveryIdHeader: 'X-Partner-Delivery' },
    secret: 'partner-shared-key',
    other: 'partner-other-key',
    body: json({ orderId: 42, lines: ['é', '✓'] }),
    sign(body, secret, at) {
      const time = String(Math.floor(at / 1000));
      return { headers: [['X-Partner-Signature', `sha512=${createHmac('sha512', secret).update(`${time}.${body}`).digest('base64')}`], ['X-Partner-Time', time], ['X-Partner-Delivery', 'd-42']] };
    },
    deliveryId: 'd-42',
    timed: true,
    credential: 'X-Partner-Signature',
  },
  basic: {
    auth: { scheme: 'basic', secret: 'ERP_BASIC' },
    secret: 'erp:correct horse battery staple',
    other: 'erp:wrong',
    body: json({ orderId: 1 }),
    sign: (_body, secret) => ({ headers: [['Authorization', `Basic ${Buffer.from(secret).toString('base64')}`]] }),
    deliveryId: null,
    timed: false,
    credential: 'Authorization',
  },
  'api-key': {
    auth: { scheme: 'api-key', secret: 'ERP_KEY', header: 'X-API-Key', deliveryIdHeader: 'X-Request-Id' },
    secret: 'k_0123456789abcdef',
    other: 'k_fedcba9876543210',
    body: json({ orderId: 1 }),
    sign: (_body, secret) => ({ headers: [['X-API-Key', secret], ['X-Request-Id', 'r-1']] }),
    deliveryId: 'r-1',
    timed: false,
    credential: 'X-API-Key',
  },
};

/** What the service does with a call: its verified delivery, 'bearer', or the code of its refusal. */
function check(auth: KeyedInboundAuth, keys: string[], signed: Signed, body: string | Buffer, nowMs = NOW): string {
  const headers: Headers = [...signed.headers, ['Content-Type', signed.contentType ?? 'application/json']];
  try {
    const inbound = readInbound(auth, inboundRequest({ headers, publicUrl: PUBLIC_URL, nowMs }));
    if (inbound === 'bearer') return 'bearer';
    const verified = inbound.verify(keys, typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
    return `ok ${verified.scheme} ${verified.deliveryId}`;
  } catch (error) {
    if (error instanceof AuthRefusal) return error.code;
    throw error;
  }
}

const withHeaders = (signed: Signed, headers: Headers): Signed => ({ ...signed, headers });

describe.each(Object.entries(CASES))('inbound scheme %s', (name, c) => {
  const ok = `ok ${name} ${c.deliveryId}`;
  const mismatch = name === 'basic' || name === 'api-key' ? 'unknown_key' : 'bad_signature';

  it("accepts a call signed by the provider's own library, naming its delivery", async () => {
    expect(check(c.auth, [c.secret], await c.sign(c.body, c.secret, NOW), c.body)).toBe(ok);
  });

  it('accepts the previous secret during a rotation, and refuses a key that is neither', async () => {
    const auth = { ...c.auth, previousSecret: 'OLD' };
    expect(check(auth, [c.other, c.secret], await c.sign(c.body, c.secret, NOW), c.body)).toBe(ok);
    expect(check(auth, [c.other], await c.sign(c.body, c.secret, NOW), c.body)).toBe(mismatch);
  });

  it('refuses the wrong secret, and a call when no key is configured', async () => {
    expect(check(c.auth, [c.secret], await c.sign(c.body, c.other, NOW), c.body)).toBe(mismatch);
    expect(check(c.auth, [], await c.sign(c.body, c.secret, NOW), c.body)).toBe('unknown_key');
  });

  it('refuses a call whose credential header is missing, or sent twice', async () => {
    const signed = await c.sign(c.body, c.secret, NOW);
    const without = signed.headers.filter(([n]) => n !== c.credential);
    expect(check(c.auth, [c.secret], withHeaders(signed, without), c.body)).toBe('missing_signature');
    const twice = signed.headers.find(([n]) => n === c.credential) as [string, string];
    expect(check(c.auth, [c.secret], withHeaders(signed, [...signed.headers, twice]), c.body)).toBe('bad_signature');
  });

  it('refuses a bearer token alone, unless the integration allows both', async () => {
    const signed = await c.sign(c.body, c.secret, NOW);
    const bearerOnly = withHeaders(signed, [...signed.headers.filter(([n]) => n !== c.credential), ['Authorization', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x']]);
    expect(check(c.auth, [c.secret], bearerOnly, c.body)).toBe('missing_signature');
    expect(check({ ...c.auth, allowBearer: true }, [c.secret], bearerOnly, c.body)).toBe('bearer');
    // A call presenting both is checked by the scheme: a valid token never excuses a bad signature.
    if (name !== 'basic') {
      const both = withHeaders(signed, [...signed.headers, ['Authorization', 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x']]);
      expect(check({ ...c.auth, allowBearer: true }, [c.secret], both, c.body)).toBe(ok);
      expect(check({ ...c.auth, allowBearer: true }, [c.other], both, c.body)).toBe(mismatch);
    }
  });

  if (name !== 'basic' && name !== 'api-key') {
    it('refuses a body with one byte changed, and a body a proxy re-encoded', async () => {
      const signed = await c.sign(c.body, c.secret, NOW);
      const bytes = Buffer.from(c.body, 'utf8');
      for (const at of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
        const tampered = Buffer.from(bytes);
        tampered[at] ^= 0x01;
        expect(check(c.auth, [c.secret], signed, tampered)).toBe('bad_signature');
      }
      // What a proxy that parses bodies sends on: JSON serialized again (its whitespace differs), a form
      // re-encoded in Latin-1 (Twilio signs the form's decoded parameters, not its bytes).
      const reencoded = name === 'twilio' ? c.body.replace('%C3%A9', '%E9') : JSON.stringify(JSON.parse(c.body));
      expect(reencoded).not.toBe(c.body);
      expect(check(c.auth, [c.secret], signed, reencoded)).toBe('bad_signature');
    });
  }

  if (c.timed) {
    it('refuses a signed time older or newer than the tolerance, and accepts one just within it', async () => {
      const tolerance = ('toleranceSeconds' in c.auth ? (c.auth.toleranceSeconds ?? 300) : 300) * 1000;
      expect(check(c.auth, [c.secret], await c.sign(c.body, c.secret, NOW - tolerance - 1000), c.body)).toBe('timestamp_outside_tolerance');
      expect(check(c.auth, [c.secret], await c.sign(c.body, c.secret, NOW + tolerance + 1000), c.body)).toBe('timestamp_outside_tolerance');
      expect(check(c.auth, [c.secret], await c.sign(c.body, c.secret, NOW - tolerance + 1000), c.body)).toBe(ok);
      expect(check(c.auth, [c.secret], await c.sign(c.body, c.secret, NOW + tolerance - 1000), c.body)).toBe(ok);
    });
  }

  it("names its credential headers, which are left out of RequestHeaders", () => {
    expect(credentialHeadersOf(c.auth)?.has(c.credential.toLowerCase())).toBe(true);
  });
});

describe('schemes that sign the URL', () => {
  it('refuse to guess it without PUBLIC_BASE_URL (a 500 naming the setting), never from Host', () => {
    for (const auth of [CASES['hubspot-v3'].auth, CASES.twilio.auth]) {
      const headers: Headers = [[auth.scheme === 'twilio' ? 'X-Twilio-Signature' : 'X-HubSpot-Signature-v3', 'AAAA'], ['X-HubSpot-Request-Timestamp', String(NOW)], ['Host', 'hooks.example.com']];
      const read = () => readInbound(auth, inboundRequest({ headers, publicUrl: null, nowMs: NOW }));
      expect(read).toThrow(GiError);
      expect(read).toThrow(/PUBLIC_BASE_URL/);
    }
  });

  it('HubSpot v3 decodes the escapes its guide lists in the URI, and no others', () => {
    const url = 'https://hooks.example.com/api/Platform/acme/Deal/hook/GenericIntegration?next=a%3Ab%2Fc&name=x%20y';
    const decoded = 'https://hooks.example.com/api/Platform/acme/Deal/hook/GenericIntegration?next=a:b/c&name=x%20y';
    const body = '[]';
    const secret = 'hubspot-secret';
    const signature = HubSpotSignature.getSignature('POST', 'v3', { clientSecret: secret, url: decoded, requestBody: body, timestamp: NOW, signature: '' });
    const request = inboundRequest({ headers: [['X-HubSpot-Signature-v3', signature], ['X-HubSpot-Request-Timestamp', String(NOW)]], publicUrl: url, nowMs: NOW });
    const inbound = readInbound(CASES['hubspot-v3'].auth, request);
    expect(inbound !== 'bearer' && inbound.verify([secret], Buffer.from(body))).toEqual({ scheme: 'hubspot-v3', deliveryId: null });
  });

  it('Twilio checks a JSON body through the bodySHA256 parameter of the URL it signs', () => {
    const body = '{"event":"com.twilio.messaging.inbound-message.received"}';
    const secret = 'twilio-token';
    const sha = createHash('sha256').update(body).digest('hex');
    const url = `https://hooks.example.com/api/Platform/acme/Deal/hook/GenericIntegration?bodySHA256=${sha}`;
    const signature = getExpectedTwilioSignature(secret, url, {});
    const verify = (sent: string) => {
      const inbound = readInbound(CASES.twilio.auth, inboundRequest({ headers: [['X-Twilio-Signature', signature], ['Content-Type', 'application/json']], publicUrl: url, nowMs: NOW }));
      try {
        return inbound !== 'bearer' && inbound.verify([secret], Buffer.from(sent)).scheme;
      } catch (error) {
        return (error as AuthRefusal).code;
      }
    };
    expect(verify(body)).toBe('twilio');
    expect(verify(body.replace('received', 'receivee'))).toBe('bad_signature');
  });
});
