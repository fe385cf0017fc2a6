/**
 * How an integration's webhook calls prove who sent them (`inboundAuth`, docs/inbound.md). `bearer`, the
 * default, is a token of the bot (spec 5). The other schemes are for producers that cannot send one:
 * they sign each delivery with a key the integration names as one of its connector secrets (or, for
 * `basic` and `api-key`, send that key itself). The rules of each scheme are in libs/auth `inbound/`.
 */

/** Schemes whose producer signs the body with an HMAC (the signature covers the bytes as sent). */
export const SIGNATURE_SCHEMES = ['github', 'stripe', 'shopify', 'slack', 'hubspot-v3', 'twilio', 'standard-webhooks', 'hmac'] as const;
/** Schemes whose producer sends the key itself, in a header: nothing of the body is signed. */
export const CREDENTIAL_SCHEMES = ['basic', 'api-key'] as const;
export const INBOUND_SCHEMES = ['bearer', ...SIGNATURE_SCHEMES, ...CREDENTIAL_SCHEMES] as const;

export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];
export type CredentialScheme = (typeof CREDENTIAL_SCHEMES)[number];
export type InboundScheme = (typeof INBOUND_SCHEMES)[number];

/** Schemes whose signature covers a timestamp, refused outside the tolerance (too old and too new alike). */
export const TIMED_SCHEMES: readonly InboundScheme[] = ['stripe', 'slack', 'hubspot-v3', 'standard-webhooks'];
/** Schemes whose signature covers the URL the producer called: it is rebuilt from PUBLIC_BASE_URL, never from `Host`. */
export const URL_SIGNING_SCHEMES: readonly InboundScheme[] = ['hubspot-v3', 'twilio'];

export const HMAC_ALGORITHMS = ['sha1', 'sha256', 'sha512'] as const;
export const HMAC_ENCODINGS = ['hex', 'base64'] as const;
export type HmacAlgorithm = (typeof HMAC_ALGORITHMS)[number];
export type HmacEncoding = (typeof HMAC_ENCODINGS)[number];

export const DEFAULT_TOLERANCE_SECONDS = 300;
export const TOLERANCE_BOUNDS = Object.freeze({ min: 1, max: 3600 });
export const DEFAULT_API_KEY_HEADER = 'X-API-Key';

/** What every scheme but bearer has: the secrets holding its key, and whether a bot token is accepted as well. */
interface KeyedAuth {
  /** The connector secret (of the integration, else of the bot) holding the key. */
  secret: string;
  /** During a rotation: a second secret whose key is accepted too. */
  previousSecret?: string;
  /** A call that carries no credential of the scheme but a token of the bot is accepted too. */
  allowBearer?: boolean;
}

/** A header that carries the producer's delivery id, used as the call's Idempotency-Key (hmac, basic, api-key). */
interface DeliveryIdHeader {
  deliveryIdHeader?: string;
}

export type InboundAuth =
  | { scheme: 'bearer' }
  | (KeyedAuth & { scheme: 'github' | 'shopify' | 'twilio' })
  | (KeyedAuth & { scheme: 'stripe' | 'slack' | 'hubspot-v3' | 'standard-webhooks'; toleranceSeconds: number })
  | (KeyedAuth &
      DeliveryIdHeader & {
        scheme: 'hmac';
        /** The header carrying the signature. */
        header: string;
        algorithm: HmacAlgorithm;
        encoding: HmacEncoding;
        /** Text before the signature in the header (`sha256=`); none when absent. */
        prefix?: string;
        /** A header carrying a Unix time in seconds: the signed content is then `<timestamp>.<body>`. */
        timestampHeader?: string;
        toleranceSeconds?: number;
      })
  | (KeyedAuth & DeliveryIdHeader & { scheme: 'basic' })
  | (KeyedAuth & DeliveryIdHeader & { scheme: 'api-key'; header: string });

export type KeyedInboundAuth = Exclude<InboundAuth, { scheme: 'bearer' }>;

export const BEARER_AUTH: InboundAuth = Object.freeze({ scheme: 'bearer' });

/** An integration's inbound auth; integrations deployed before the setting existed have none: bearer. */
export const inboundAuthOf = (integration: { inboundAuth?: InboundAuth }): InboundAuth => integration.inboundAuth ?? BEARER_AUTH;

/** The secret names an inbound auth reads, the current one first. */
export const inboundSecretNames = (auth: InboundAuth): string[] =>
  auth.scheme === 'bearer' ? [] : auth.previousSecret === undefined ? [auth.secret] : [auth.secret, auth.previousSecret];

/**
 * What the gateway verified of a call, kept with its invocation and shown to the connector
 * (`Context.InboundAuth`): the scheme, and the producer's delivery id when it sent one. A call made with
 * a bot token has none stored (its scheme is `bearer`).
 */
export interface VerifiedInbound {
  scheme: InboundScheme;
  deliveryId: string | null;
}

/** A delivery id is kept (and deduplicates) only when it is 1-200 printable ASCII characters. */
const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;

export const acceptableDeliveryId = (value: string | null | undefined): string | null => (value !== null && value !== undefined && DELIVERY_ID.test(value) ? value : null);
