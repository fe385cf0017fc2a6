import fc from 'fast-check';
import type { KeyedInboundAuth } from '@gi/domain';
import { AuthRefusal } from '../bearer';
import { inboundRequest } from './inbound-request.fixture';
import { readInbound } from './inbound-schemes';

/**
 * Property-based fuzzing of every inbound scheme's header parsing: whatever a caller puts in the headers
 * a scheme reads (any text, repeated, huge, made of the characters its parser splits on) and whatever
 * body it sends, the check either passes or refuses with a 401 (AuthRefusal): never another exception,
 * which the service would answer 500. The keys are right, so only the parsing is on trial.
 */

const NOW = 1_790_000_000_000;
const PUBLIC_URL = 'https://hooks.example.com/api/Platform/acme/Deal/hook/GenericIntegration?x=%3A1';

const AUTHS: KeyedInboundAuth[] = [
  { scheme: 'github', secret: 'S' },
  { scheme: 'stripe', secret: 'S', toleranceSeconds: 300 },
  { scheme: 'shopify', secret: 'S' },
  { scheme: 'slack', secret: 'S', toleranceSeconds: 300 },
  { scheme: 'hubspot-v3', secret: 'S', toleranceSeconds: 300 },
  { scheme: 'twilio', secret: 'S' },
  { scheme: 'standard-webhooks', secret: 'S', toleranceSeconds: 300 },
  { scheme: 'hmac', secret: 'S', header: 'X-Sig', algorithm: 'sha256', encoding: 'hex', prefix: 'v1=', timestampHeader: 'X-Time', toleranceSeconds: 60, deliveryIdHeader: 'X-Id' },
  { scheme: 'hmac', secret: 'S', header: 'X-Sig', algorithm: 'sha1', encoding: 'base64' },
  { scheme: 'basic', secret: 'S', deliveryIdHeader: 'X-Id' },
  { scheme: 'api-key', secret: 'S', header: 'X-API-Key' },
];

/** Every header some scheme reads. */
const HEADERS = [
  'X-Hub-Signature-256',
  'X-GitHub-Delivery',
  'Stripe-Signature',
  'X-Shopify-Hmac-Sha256',
  'X-Shopify-Webhook-Id',
  'X-Slack-Signature',
  'X-Slack-Request-Timestamp',
  'X-HubSpot-Signature-v3',
  'X-HubSpot-Request-Timestamp',
  'X-Twilio-Signature',
  'X-Twilio-Webhooks-Signature-Settings',
  'I-Twilio-Idempotency-Token',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
  'X-Sig',
  'X-Time',
  'X-Id',
  'Authorization',
  'X-API-Key',
  'Content-Type',
];

/** Values made of what the parsers look at (separators, prefixes, digits, base64 and hex), or anything at all. */
const headerValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.array(fc.constantFrom('t=', 'v1=', 'v0=', 'v1,', 'sha256=', ',', ' ', '=', '1790000000', '1790000000000', 'AAAA', 'ab', 'ff', '+', '/', 'whsec_', 'Basic ', 'Bearer ', 'algorithm=HMAC_SHA256', 'application/x-www-form-urlencoded'), { maxLength: 40 }).map((parts) => parts.join('')),
  fc.constantFrom('', ' ', ','.repeat(8000), 't=1,'.repeat(2000), 'v1,AAAA '.repeat(1500), '9'.repeat(400)),
);
const headerLines = fc.array(fc.tuple(fc.constantFrom(...HEADERS), headerValue), { maxLength: 12 });
const body = fc.oneof(fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)), fc.json().map((text) => Buffer.from(text)));

describe.each(AUTHS.map((auth) => [auth.scheme, auth] as const))('the %s scheme, on any headers and body', (_name, auth) => {
  it('passes or refuses with a 401, never throwing anything else', () => {
    fc.assert(
      fc.property(headerLines, body, fc.boolean(), (headers, sent, allowBearer) => {
        try {
          const inbound = readInbound({ ...auth, allowBearer }, inboundRequest({ headers, publicUrl: PUBLIC_URL, nowMs: NOW }));
          if (inbound !== 'bearer') inbound.verify(['S', 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'], sent);
        } catch (error) {
          if (!(error instanceof AuthRefusal)) throw error;
          expect(error.headers['WWW-Authenticate']).toMatch(/realm="generic-integration"/);
        }
      }),
      { numRuns: 400 },
    );
  });
});
