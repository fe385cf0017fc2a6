/** The webhook configuration of a bot: entities, integrations (deployed connectors) and tokens. */

/** The five webhook fields every entity has (spec 2.1). */
export const WEBHOOK_FIELDS = ['RequestParams', 'RequestBody', 'RequestHeaders', 'ResponseBody', 'RequestFiles'] as const;

export interface EntityDefinition {
  botId: string;
  name: string;
  /** The webhook fields followed by any extra fields the entity defines. */
  fields: string[];
  updatedAt: number;
}

export interface IntegrationSettings {
  entityName: string;
  code: string;
  /** Executor pool (queue) that runs this integration. */
  pool: string;
  /** Wall-time limit of one run. */
  timeoutSeconds: number;
  /** Hosts the connector may call through Context.Http. */
  allowedHosts: string[];
  /** Where the outcome of every invocation is POSTed, unless the call names its own (Callback-Url). */
  callbackUrl: string | null;
}

export interface IntegrationDefinition extends IntegrationSettings {
  botId: string;
  integrationId: string;
  version: number;
  deployedAt: number;
}

export interface TokenRecord {
  botId: string;
  tokenId: string;
  label: string | null;
  createdAt: number;
  /** Null for permanent tokens. */
  expiresAt: number | null;
  revokedAt: number | null;
}

/**
 * A bot's key for signing callbacks (Standard Webhooks: `whsec_` + base64 of 32 random bytes). The newest
 * has no end; a rotation gives the ones before it an end, until which callbacks carry both signatures.
 */
export interface SigningSecret {
  secret: string;
  createdAt: number;
  expiresAt: number | null;
}

export const DEFAULT_POOL = 'default';
export const DEFAULT_TIMEOUT_SECONDS = 60;
export const MAX_TIMEOUT_SECONDS = 24 * 3600;
