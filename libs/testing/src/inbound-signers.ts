import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sign as githubSign } from '@octokit/webhooks-methods';
import { Signature as HubSpotSignature } from '@hubspot/api-client/lib/src/utils/signature';
import { verifySlackRequest } from '@slack/bolt/dist/receivers/verify-request';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { getExpectedTwilioSignature } from 'twilio/lib/webhooks/webhooks';
import type { KeyedInboundAuth } from '@gi/domain';

/** A call as its producer sends it: the body and the headers that sign it. */
export interface ProducerCall {
  body: string;
  contentType: string;
  headers: Record<string, string>;
  /** The delivery id the service should read from it (Context.InboundAuth.deliveryId). */
  deliveryId: string | null;
}

/** One scheme's producer: the inbound auth of its integration, the key it signs with, and how it signs a delivery. */
export interface Producer {
  auth: KeyedInboundAuth;
  /** The value of the connector secret `auth.secret` names. */
  key: string;
  /** Another key of the same form (a wrong one, or the next in a rotation). */
  otherKey: string;
  /** Signs delivery `delivery` sent to `url` at `at` (epoch ms), with `key` unless another is given. */
  sign(options: { url: string; at: number; delivery: string; key?: string }): Promise<ProducerCall>;
}

const stripe = new Stripe('sk_test_producer');

/** A producer signing with its key unless the call names another. */
const producer = (auth: KeyedInboundAuth, key: string, otherKey: string, signWith: (key: string, call: { url: string; at: number; delivery: string }) => Promise<ProducerCall>): Producer => ({
  auth,
  key,
  otherKey,
  sign: ({ key: signing = key, ...call }) => signWith(signing, call),
});
const json = (value: unknown) => JSON.stringify(value, null, 1);
const seconds = (at: number) => Math.floor(at / 1000);

/**
 * A producer per inbound scheme, each signing with the provider's own published library where one exists
 * (@octokit/webhooks-methods, stripe, standardwebhooks, twilio, @hubspot/api-client; Slack's recipe
 * checked by @slack/bolt's verifier; Shopify's documented recipe): the oracles of the end-to-end and
 * route-auth tests. Every integration names the connector secret `secretName` for its key.
 */
export function producers(secretName: string): Record<KeyedInboundAuth['scheme'], Producer> {
  const key = () => randomBytes(18).toString('base64url');
  return {
    github: producer({ scheme: 'github', secret: secretName }, key(), key(), async (signing, { delivery }) => {
      const body = json({ action: 'opened', issue: { number: 7, title: 'Café ✓' } });
      return { body, contentType: 'application/json', deliveryId: delivery, headers: { 'X-Hub-Signature-256': await githubSign(signing, body), 'X-GitHub-Delivery': delivery, 'X-GitHub-Event': 'issues' } };
    }),
    stripe: producer({ scheme: 'stripe', secret: secretName, toleranceSeconds: 300 }, `whsec_${key()}`, `whsec_${key()}`, async (signing, { at, delivery }) => {
      const body = json({ id: `evt_${delivery}`, object: 'event', type: 'payment_intent.succeeded' });
      const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: signing, timestamp: seconds(at) });
      return { body, contentType: 'application/json; charset=utf-8', deliveryId: `evt_${delivery}`, headers: { 'Stripe-Signature': header } };
    }),
    shopify: producer({ scheme: 'shopify', secret: secretName }, key(), key(), async (signing, { delivery }) => {
      const body = json({ id: 820982911946154508, email: 'ada@example.com', note: 'Grüße' });
      // Shopify's documented recipe: Base64(HMAC-SHA256(the app's secret, raw body)).
      const hmac = createHmac('sha256', signing).update(body, 'utf8').digest('base64');
      return { body, contentType: 'application/json', deliveryId: delivery, headers: { 'X-Shopify-Hmac-Sha256': hmac, 'X-Shopify-Webhook-Id': delivery, 'X-Shopify-Topic': 'orders/create' } };
    }),
    slack: producer({ scheme: 'slack', secret: secretName, toleranceSeconds: 300 }, key(), key(), async (signing, { at, delivery }) => {
      const body = json({ type: 'event_callback', event_id: `Ev${delivery}`, event: { type: 'app_mention', text: 'hi' } });
      const signature = `v0=${createHmac('sha256', signing).update(`v0:${seconds(at)}:${body}`).digest('hex')}`;
      verifySlackRequest({ signingSecret: signing, body, headers: { 'x-slack-signature': signature, 'x-slack-request-timestamp': seconds(at) }, nowMilliseconds: at });
      return { body, contentType: 'application/json', deliveryId: `Ev${delivery}`, headers: { 'X-Slack-Signature': signature, 'X-Slack-Request-Timestamp': String(seconds(at)) } };
    }),
    'hubspot-v3': producer({ scheme: 'hubspot-v3', secret: secretName, toleranceSeconds: 300 }, key(), key(), async (signing, { url, at, delivery }) => {
      // HubSpot's event ids are numbers: one per delivery name.
      const eventId = parseInt(createHash('sha256').update(delivery).digest('hex').slice(0, 12), 16);
      const body = json([{ eventId, subscriptionId: 4, portalId: 62515, occurredAt: at, subscriptionType: 'contact.creation', attemptNumber: 0, objectId: 123 }]);
      const signature = HubSpotSignature.getSignature('POST', 'v3', { clientSecret: signing, url, requestBody: body, timestamp: at, signature: '' });
      return { body, contentType: 'application/json', deliveryId: `events:${eventId}`, headers: { 'X-HubSpot-Signature-v3': signature, 'X-HubSpot-Request-Timestamp': String(at), 'X-HubSpot-Signature-Version': 'v3' } };
    }),
    twilio: producer({ scheme: 'twilio', secret: secretName }, key(), key(), async (signing, { url, delivery }) => {
      const params = { To: '+15005550006', From: '+15005550001', Body: 'Héllo & bye', MessageSid: `SM${delivery}` };
      const signature = getExpectedTwilioSignature(signing, url, params);
      return {
        body: new URLSearchParams(params).toString(),
        contentType: 'application/x-www-form-urlencoded',
        deliveryId: delivery,
        headers: { 'X-Twilio-Signature': signature, 'I-Twilio-Idempotency-Token': delivery },
      };
    }),
    'standard-webhooks': producer({ scheme: 'standard-webhooks', secret: secretName, toleranceSeconds: 300 }, `whsec_${randomBytes(32).toString('base64')}`, `whsec_${randomBytes(32).toString('base64')}`, async (signing, { at, delivery }) => {
      const body = json({ type: 'invoice.paid', data: { id: 'in_1' } });
      const id = `msg_${delivery}`;
      return {
        body,
        contentType: 'application/json',
        deliveryId: id,
        headers: { 'webhook-id': id, 'webhook-timestamp': String(seconds(at)), 'webhook-signature': new StandardWebhook(signing).sign(id, new Date(at), body) },
      };
    }),
    hmac: producer({ scheme: 'hmac', secret: secretName, header: 'X-Partner-Signature', algorithm: 'sha512', encoding: 'base64', prefix: 'sha512=', timestampHeader: 'X-Partner-Time', toleranceSeconds: 300, deliveryIdHeader: 'X-Partner-Delivery' }, key(), key(), async (signing, { at, delivery }) => {
      const body = json({ orderId: 42, lines: ['é', '✓'] });
      const signature = `sha512=${createHmac('sha512', signing).update(`${seconds(at)}.${body}`).digest('base64')}`;
      return { body, contentType: 'application/json', deliveryId: delivery, headers: { 'X-Partner-Signature': signature, 'X-Partner-Time': String(seconds(at)), 'X-Partner-Delivery': delivery } };
    }),
    basic: producer({ scheme: 'basic', secret: secretName, deliveryIdHeader: 'X-Delivery-Id' }, `erp:${key()}`, `erp:${key()}`, async (signing, { delivery }) => {
      return { body: json({ orderId: 1 }), contentType: 'application/json', deliveryId: delivery, headers: { Authorization: `Basic ${Buffer.from(signing).toString('base64')}`, 'X-Delivery-Id': delivery } };
    }),
    'api-key': producer({ scheme: 'api-key', secret: secretName, header: 'X-API-Key', deliveryIdHeader: 'X-Delivery-Id' }, key(), key(), async (signing, { delivery }) => {
      return { body: json({ orderId: 1 }), contentType: 'application/json', deliveryId: delivery, headers: { 'X-API-Key': signing, 'X-Delivery-Id': delivery } };
    }),
  };
}
