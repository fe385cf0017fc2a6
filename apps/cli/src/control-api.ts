import type { ConnectorLimits, ConnectorSource } from '@gi/domain';
import { z } from 'zod';

/**
 * The control API replies the CLI reads. Only the members it shows are checked; the rest pass through
 * untouched so --json prints everything the service sent.
 */
const time = z.union([z.number(), z.string()]);
const nullableTime = time.nullable().optional();

export const entitySchema = z.looseObject({ botId: z.string(), name: z.string(), fields: z.array(z.string()), updatedAt: time.optional() });
export const entityListSchema = z.looseObject({ entities: z.array(entitySchema) });

export const integrationSchema = z.looseObject({
  botId: z.string(),
  integrationId: z.string(),
  version: z.number(),
  entityName: z.string(),
  pool: z.string(),
  timeoutSeconds: z.number(),
  allowedHosts: z.array(z.string()),
  limits: z
    .looseObject({ memoryMiB: z.number(), cpuSeconds: z.number(), responseBodyKiB: z.number(), logKiB: z.number(), pendingCalls: z.number() })
    .optional(),
  callbackUrl: z.string().nullable().optional(),
  /** Absent from servers that predate inbound auth: bearer. */
  inboundAuth: z.looseObject({ scheme: z.string(), secret: z.string().optional(), previousSecret: z.string().optional(), allowBearer: z.boolean().optional() }).optional(),
  deployedAt: time.optional(),
});
export const integrationListSchema = z.looseObject({ integrations: z.array(integrationSchema) });
export const integrationDetailSchema = integrationSchema.extend({
  code: z.string(),
  /** The project files a bundle was built from; empty for a plain script (and from servers that predate them). */
  sources: z.array(z.looseObject({ path: z.string(), content: z.string() })).default([]),
  versions: z.array(z.looseObject({ version: z.number(), deployedAt: time.optional() })).default([]),
});

export const createdTokenSchema = z.looseObject({ token: z.string(), tokenId: z.string(), expiresAt: nullableTime });
export const tokenSchema = z.looseObject({
  tokenId: z.string(),
  label: z.string().nullable().optional(),
  createdAt: time.optional(),
  expiresAt: nullableTime,
  revokedAt: nullableTime,
});
export const tokenListSchema = z.looseObject({ tokens: z.array(tokenSchema) });

const url = z.string().nullable().optional();
export const webhookSchema = z.looseObject({
  baseUrl: z.string(),
  botId: z.string(),
  pollUrl: url,
  eventUrl: url,
  integrations: z.array(
    z.looseObject({
      integrationId: z.string(),
      entityName: z.string(),
      urls: z.looseObject({ sync: z.string(), async: url, fileTransfer: url, poll: url, event: url }),
      /** What to paste into the provider's settings (absent from servers that predate inbound auth). */
      inboundAuth: z
        .looseObject({
          scheme: z.string(),
          provider: z.string(),
          fields: z.array(z.looseObject({ label: z.string(), value: z.string() })),
          secrets: z.array(z.looseObject({ name: z.string(), set: z.boolean() })),
          note: z.string(),
        })
        .optional(),
    }),
  ),
});

const invocationErrorSchema = z.looseObject({ code: z.string().optional(), title: z.string(), detail: z.string().optional() });
export const invocationSummarySchema = z.looseObject({
  id: z.string(),
  integrationId: z.string(),
  entityName: z.string(),
  mode: z.string(),
  status: z.string(),
  attempt: z.number().optional(),
  createdAt: time,
  startedAt: nullableTime,
  finishedAt: nullableTime,
  durationMs: z.number().nullable().optional(),
  error: invocationErrorSchema.nullable().optional(),
});
export const invocationListSchema = z.looseObject({ invocations: z.array(invocationSummarySchema), nextBefore: z.string().nullable().optional() });
export const invocationDetailSchema = invocationSummarySchema.extend({
  entity: z.unknown().optional(),
  outcome: z.unknown().optional(),
  logs: z.array(z.looseObject({ at: time, level: z.string(), message: z.string(), attempt: z.number().optional() })).default([]),
  progress: z.looseObject({ percent: z.number(), message: z.string().nullable().optional() }).nullable().optional(),
  callback: z
    .looseObject({ url: z.string(), state: z.string(), attempts: z.number(), nextAttemptAt: nullableTime, lastError: z.string().nullable().optional() })
    .nullable()
    .optional(),
  // Durable runs; absent from servers that predate them.
  waiting: z.looseObject({ for: z.string(), name: z.string(), until: time }).nullable().optional(),
  steps: z.number().optional(),
  activeMs: z.number().optional(),
});

/** One entry of a durable run's journal (GET .../invocations/{id}/steps). */
export const stepSchema = z.looseObject({
  name: z.string(),
  occurrence: z.number(),
  kind: z.string(),
  status: z.string(),
  attempts: z.number(),
  startedAt: time,
  finishedAt: nullableTime,
  durationMs: z.number().nullable().optional(),
  until: nullableTime,
  resultBytes: z.number(),
  error: z.looseObject({ name: z.string(), message: z.string() }).nullable().optional(),
});
export const stepPageSchema = z.looseObject({ steps: z.array(stepSchema), nextBefore: z.string().nullable().optional() });

/** What POST .../GenericIntegrationEvent answers: the run resumed with the event, or it is kept for its next wait. */
export const eventReceiptSchema = z.looseObject({ invocationId: z.string(), name: z.string(), status: z.string() });

const limitsSchema = z.looseObject({ ratePerSecond: z.number().nullable(), burst: z.number().nullable(), maxInFlight: z.number().nullable() });
export const tokenQuotasSchema = z.looseObject({ tokenId: z.string(), quotas: limitsSchema, effective: limitsSchema });
export const botQuotasSchema = z.looseObject({ botId: z.string(), quotas: limitsSchema, effective: limitsSchema, tokens: z.array(tokenQuotasSchema).default([]) });

export const createdSecretSchema = z.looseObject({ secret: z.string(), createdAt: time, previousSecretValidUntil: nullableTime });
export const secretInfoSchema = z.looseObject({ botId: z.string(), createdAt: time, previousSecretValidUntil: nullableTime });

export const cancelledSchema = z.looseObject({ invocationId: z.string(), status: z.string() });

export const versionListSchema = z.looseObject({
  integrationId: z.string(),
  latest: z.number(),
  versions: z.array(z.looseObject({ version: z.number(), deployedAt: time })),
  draft: z.looseObject({ draftedAt: time }).nullable().optional(),
});
export const draftSchema = integrationSchema.omit({ version: true, deployedAt: true }).extend({ draftedAt: time, liveVersion: z.number() });
export const publishedSchema = integrationSchema.extend({ publishedDraftAt: time });
const replaySideSchema = z.looseObject({
  status: z.string(),
  responseBody: z.unknown(),
  error: invocationErrorSchema.nullable().optional(),
  durationMs: z.number().nullable(),
});
export const replaySchema = z.looseObject({
  integrationId: z.string(),
  publishedVersion: z.number(),
  outbound: z.string(),
  changed: z.number(),
  replayed: z.array(
    z.looseObject({
      invocationId: z.string(),
      createdAt: time,
      published: replaySideSchema.extend({ version: z.number() }),
      draft: replaySideSchema.extend({ logs: z.array(z.looseObject({ level: z.string(), message: z.string() })).default([]) }),
      diff: z.string(),
    }),
  ),
});
export type ReplayView = z.infer<typeof replaySchema>;
export const versionDiffSchema = z.looseObject({
  integrationId: z.string(),
  from: z.number(),
  to: z.number(),
  code: z.string(),
  sources: z.array(z.looseObject({ path: z.string(), diff: z.string() })),
  settings: z.array(z.looseObject({ name: z.string(), from: z.unknown(), to: z.unknown() })),
});
export const rolledBackSchema = integrationSchema.extend({ rolledBackTo: z.number() });
export const deletedSchema = z.looseObject({ botId: z.string(), deleted: z.literal(true), cancelledInvocations: z.number().optional() });
export type VersionDiffView = z.infer<typeof versionDiffSchema>;

export type Entity = z.infer<typeof entitySchema>;
export type Limits = z.infer<typeof limitsSchema>;
export type Integration = z.infer<typeof integrationSchema>;
export type IntegrationDetail = z.infer<typeof integrationDetailSchema>;
export type CreatedToken = z.infer<typeof createdTokenSchema>;
export type TokenInfo = z.infer<typeof tokenSchema>;
export type Webhook = z.infer<typeof webhookSchema>;
export type InvocationSummaryView = z.infer<typeof invocationSummarySchema>;
export type InvocationDetail = z.infer<typeof invocationDetailSchema>;
export type StepView = z.infer<typeof stepSchema>;
export type Time = z.infer<typeof time>;

export interface DeployRequest {
  entityName: string;
  code: string;
  sources?: ConnectorSource[];
  pool?: string;
  timeoutSeconds?: number;
  allowedHosts?: string[];
  limits?: Partial<ConnectorLimits>;
  callbackUrl?: string;
  /** Checked by the service (docs/inbound.md). */
  inboundAuth?: Record<string, unknown>;
}

export interface StepQuery {
  limit?: number;
  /** The cursor of the page before (`nextBefore` of its reply): older steps only. */
  before?: string;
}

export interface QuotaRequest {
  ratePerSecond?: number;
  burst?: number;
  maxInFlight?: number;
}

export interface InvocationQuery {
  status?: string;
  integrationId?: string;
  limit?: number;
  /** The cursor of the page before (`nextBefore` of its reply): older invocations only. */
  before?: string;
}

/** A connector secret as the API lists it: never its value. */
export const secretSchema = z.looseObject({ name: z.string(), createdAt: time, updatedAt: time });
export const secretListSchema = z.looseObject({ secrets: z.array(secretSchema) });
export const resealSchema = z.looseObject({ resealed: z.number(), current: z.number(), unreadable: z.number() });
