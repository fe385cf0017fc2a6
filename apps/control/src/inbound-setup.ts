import { inboundAuthOf, inboundSecretNames } from '@gi/domain';
import type { InboundAuth, IntegrationDefinition } from '@gi/domain';

/** One thing to paste into the provider's settings: what its screen calls it, and the value. */
export interface SetupField {
  label: string;
  value: string;
}

/**
 * What the webhook screen shows for an integration (`gi webhook`, the console): how its calls prove who
 * sent them and exactly what to paste into the provider's settings, with the state of the secrets that
 * hold its key (names only, never a value).
 */
export interface InboundSetup {
  scheme: InboundAuth['scheme'];
  /** Who sends such calls, as the provider names itself. */
  provider: string;
  fields: SetupField[];
  /** The secrets named for the key, the current one first, and whether each is set (on the integration or the bot). */
  secrets: Array<{ name: string; set: boolean }>;
  /** Where to find the setting at the provider, and what else to know. */
  note: string;
}

const secretValue = (name: string) => `the value of connector secret ${name}`;

/** The provider's screen, field by field, for each scheme; `url` is the URL the provider calls. */
function fieldsOf(auth: InboundAuth, url: string): { provider: string; fields: SetupField[]; note: string } {
  switch (auth.scheme) {
    case 'bearer':
      return {
        provider: 'Any HTTP client',
        fields: [
          { label: 'URL', value: url },
          { label: 'Authorization header', value: 'Bearer <token> (a token of this bot: gi token create)' },
        ],
        note: 'The default: every call carries a token of the bot.',
      };
    case 'github':
      return {
        provider: 'GitHub',
        fields: [
          { label: 'Payload URL', value: url },
          { label: 'Content type', value: 'application/json' },
          { label: 'Secret', value: secretValue(auth.secret) },
        ],
        note: 'Repository or organization Settings > Webhooks > Add webhook. Choose the secret yourself and store the same value in the connector secret. Redeliveries (same X-GitHub-Delivery) run once.',
      };
    case 'stripe':
      return {
        provider: 'Stripe',
        fields: [{ label: 'Endpoint URL', value: url }],
        note: `Dashboard > Developers > Webhooks > Add endpoint. Stripe then shows the endpoint's signing secret (whsec_...): store it as connector secret ${auth.secret}. Retries of an event (same id) run once; signed times older or newer than ${auth.toleranceSeconds} s are refused.`,
      };
    case 'shopify':
      return {
        provider: 'Shopify',
        fields: [
          { label: 'URL', value: url },
          { label: 'Format', value: 'JSON' },
        ],
        note: `Settings > Notifications > Webhooks, or your app's webhook subscriptions. The key is the signing secret that page shows (an app's: its client secret): store it as connector secret ${auth.secret}.`,
      };
    case 'slack':
      return {
        provider: 'Slack',
        fields: [{ label: 'Request URL', value: url }],
        note: `Your app's Event Subscriptions (or Interactivity, Slash Commands). The key is the Signing Secret under Basic Information: store it as connector secret ${auth.secret}. Slack first sends a url_verification challenge your connector answers; a call must reach Slack's answer within 3 s.`,
      };
    case 'hubspot-v3':
      return {
        provider: 'HubSpot',
        fields: [{ label: 'Target URL', value: url }],
        note: `Your app's Webhooks settings. The key is the app's client secret (Auth tab): store it as connector secret ${auth.secret}. The signed URL is rebuilt from PUBLIC_BASE_URL: paste exactly the URL above.`,
      };
    case 'twilio':
      return {
        provider: 'Twilio',
        fields: [
          { label: 'Webhook URL (A message comes in, status callback, ...)', value: url },
          { label: 'HTTP method', value: 'HTTP POST' },
        ],
        note: `The key is the account's Auth Token (Console > Account info): store it as connector secret ${auth.secret}. The signed URL is rebuilt from PUBLIC_BASE_URL: paste exactly the URL above.`,
      };
    case 'standard-webhooks':
      return {
        provider: 'Standard Webhooks sender (Svix and others)',
        fields: [{ label: 'Endpoint URL', value: url }],
        note: `The sender shows the endpoint's signing secret (whsec_...): store it as connector secret ${auth.secret}. Deliveries are deduplicated by webhook-id.`,
      };
    case 'hmac': {
      const signed = auth.timestampHeader ? `<${auth.timestampHeader}>.<body>` : '<body>';
      const fields = [
        { label: 'URL', value: url },
        { label: auth.header, value: `${auth.prefix ?? ''}<${auth.encoding} HMAC-${auth.algorithm.toUpperCase()} of ${signed}, keyed with ${secretValue(auth.secret)}>` },
      ];
      if (auth.timestampHeader) fields.push({ label: auth.timestampHeader, value: '<Unix time in seconds>' });
      if (auth.deliveryIdHeader) fields.push({ label: auth.deliveryIdHeader, value: '<an id per delivery, the same on a retry>' });
      return { provider: 'Your producer', fields, note: 'The producer signs the body exactly as it sends it.' };
    }
    case 'basic':
      return {
        provider: 'Any client with basic auth',
        fields: [
          { label: 'URL', value: url },
          { label: 'User name and password', value: `${secretValue(auth.secret)}, as user:password` },
        ],
        note: 'Sent as Authorization: Basic <base64 of user:password>. Use HTTPS: the password travels with every call.',
      };
    case 'api-key':
      return {
        provider: 'Any client with an API key header',
        fields: [
          { label: 'URL', value: url },
          { label: auth.header, value: secretValue(auth.secret) },
        ],
        note: 'Use HTTPS: the key travels with every call.',
      };
  }
}

/** The setup of one integration, given the names of the secrets set on it and on its bot. */
export function inboundSetup(integration: Pick<IntegrationDefinition, 'inboundAuth'>, url: string, setSecrets: ReadonlySet<string>): InboundSetup {
  const auth = inboundAuthOf(integration);
  const { provider, fields, note } = fieldsOf(auth, url);
  const withBearer = auth.scheme !== 'bearer' && auth.allowBearer ? ' A token of the bot (Authorization: Bearer) is accepted too.' : '';
  return { scheme: auth.scheme, provider, fields, secrets: inboundSecretNames(auth).map((name) => ({ name, set: setSecrets.has(name) })), note: note + withBearer };
}
