/** The webhook configuration of a bot: entities, integrations (deployed connectors) and tokens. */

import type { ConnectorSource } from './connector-code';
import type { InboundAuth } from './inbound-auth';

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
  /** What the sandbox runs: the file as written, or the bundle the CLI built from a project. */
  code: string;
  /** The project files a bundle was built from, as their author wrote them; absent for a plain script. */
  sources?: ConnectorSource[];
  /** Executor pool (queue) that runs this integration. */
  pool: string;
  /** Wall-time limit of one run. */
  timeoutSeconds: number;
  /** Hosts the connector may call through Context.Http. */
  allowedHosts: string[];
  /** What one run may use besides wall time; each limit ends the run when it is passed. */
  limits: ConnectorLimits;
  /** Where the outcome of every invocation is POSTed, unless the call names its own (Callback-Url). */
  callbackUrl: string | null;
  /** How its webhook calls prove who sent them (docs/inbound.md); absent: a bot token (bearer). */
  inboundAuth?: InboundAuth;
}

/** Resource limits of one run of a connector, in the units the control API speaks. */
export interface ConnectorLimits {
  /** Heap of the run's engine, in MiB. */
  memoryMiB: number;
  /** Time the connector's own code may run, and the host spend on its crypto work, in seconds; waiting on HTTP or files does not count. */
  cpuSeconds: number;
  /** Largest ResponseBody, as JSON text, in KiB. */
  responseBodyKiB: number;
  /** Log text one run may write, in KiB. */
  logKiB: number;
  /** `Context.Http.Request`, `Context.ReadFile` and `crypto.subtle` calls one run may have in flight at once. */
  pendingCalls: number;
}

export interface IntegrationDefinition extends IntegrationSettings {
  botId: string;
  integrationId: string;
  version: number;
  deployedAt: number;
}

/** The settings alone of a version or draft (what a deploy stores), without its names and dates. */
export const integrationSettingsOf = (from: IntegrationSettings): IntegrationSettings => ({
  entityName: from.entityName,
  code: from.code,
  ...(from.sources?.length && { sources: from.sources }),
  pool: from.pool,
  timeoutSeconds: from.timeoutSeconds,
  allowedHosts: from.allowedHosts,
  limits: from.limits,
  callbackUrl: from.callbackUrl,
  ...(from.inboundAuth && from.inboundAuth.scheme !== 'bearer' && { inboundAuth: from.inboundAuth }),
});

/**
 * A version deployed as a draft: live calls keep using the latest published version. One per
 * integration (a new draft replaces it); publishing deploys it as the next version and removes it.
 */
export interface IntegrationDraft extends IntegrationSettings {
  botId: string;
  integrationId: string;
  /** When it was deployed as a draft. */
  draftedAt: number;
}

/** What a call needs of the latest version of the integration it names: no code, nothing to parse. */
export type IntegrationTarget = Pick<IntegrationDefinition, 'integrationId' | 'version' | 'entityName' | 'pool' | 'callbackUrl' | 'inboundAuth'>;

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
  /** As stored: sealed (`gi1:...`, see libs/auth secret-cipher.ts) once SECRETS_KEY is configured, else in clear. */
  secret: string;
  createdAt: number;
  expiresAt: number | null;
}

export const DEFAULT_POOL = 'default';
export const DEFAULT_TIMEOUT_SECONDS = 60;
/** Async runs may take hours; a sync caller stops waiting at the sync limit and polls instead. */
export const MAX_TIMEOUT_SECONDS = 24 * 3600;

export const DEFAULT_CONNECTOR_LIMITS: Readonly<ConnectorLimits> = Object.freeze({
  memoryMiB: 64,
  cpuSeconds: 60,
  responseBodyKiB: 10 * 1024,
  logKiB: 64,
  pendingCalls: 8,
});

/**
 * The range each limit may be set to. Memory: each run's engine has at least 16 MiB, and the runs
 * on one sandbox thread may hold 1.5 GiB together. ResponseBody and log: both are stored with the
 * invocation, and a MongoDB document holds at most 16 MiB.
 */
export const CONNECTOR_LIMIT_BOUNDS: Readonly<Record<keyof ConnectorLimits, { min: number; max: number }>> = Object.freeze({
  memoryMiB: { min: 16, max: 512 },
  cpuSeconds: { min: 1, max: 3600 },
  responseBodyKiB: { min: 1, max: 10 * 1024 },
  logKiB: { min: 1, max: 1024 },
  pendingCalls: { min: 1, max: 64 },
});

/** The limits of one run in the engine's units (bytes, milliseconds). */
export interface RunLimits {
  memoryBytes: number;
  cpuMs: number;
  responseBodyBytes: number;
  logBytes: number;
  pendingCalls: number;
}

export const runLimitsOf = (limits: ConnectorLimits): RunLimits => ({
  memoryBytes: limits.memoryMiB * 1024 * 1024,
  cpuMs: limits.cpuSeconds * 1000,
  responseBodyBytes: limits.responseBodyKiB * 1024,
  logBytes: limits.logKiB * 1024,
  pendingCalls: limits.pendingCalls,
});

/** Limits as stored, completed with the defaults (integrations deployed before a limit existed lack it). */
export const withDefaultLimits = (stored: Partial<ConnectorLimits> | null | undefined): ConnectorLimits => ({
  ...DEFAULT_CONNECTOR_LIMITS,
  ...stored,
});
