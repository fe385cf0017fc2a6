import { z } from 'zod';
import {
  allowedHostProblem,
  callbackUrlProblem,
  CONNECTOR_LIMIT_BOUNDS,
  DEFAULT_CONNECTOR_LIMITS,
  DEFAULT_POOL,
  DEFAULT_TIMEOUT_SECONDS,
  INVOCATION_STATUSES,
  isValidName,
  isValidStepName,
  MAX_CONNECTOR_SOURCES,
  MAX_REPLAY_REQUESTS,
  MAX_TIMEOUT_SECONDS,
  REPLAY_OUTBOUND,
  SECRET_NAME,
  sourcePathProblem,
  DEFAULT_API_KEY_HEADER,
  DEFAULT_TOLERANCE_SECONDS,
  HMAC_ALGORITHMS,
  HMAC_ENCODINGS,
  TOLERANCE_BOUNDS,
} from '@gi/domain';
import type { ConnectorLimits, InvocationListPosition, JournalEntry } from '@gi/domain';
import { MAX_TOKEN_TTL_SECONDS } from '@gi/auth';

const name = z.string().refine(isValidName, 'letters, digits, _ . - (1-128, starting with a letter or digit)');
const allowedHost = z.string().superRefine((entry, ctx) => {
  const problem = allowedHostProblem(entry);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

const callbackUrl = z.string().superRefine((url, ctx) => {
  const problem = callbackUrlProblem(url);
  if (problem) ctx.addIssue({ code: 'custom', message: `cannot receive callbacks: ${problem}` });
});

export const entityBody = z.object({ fields: z.array(name).max(200).default([]) }).strict();

const secretName = z.string().regex(SECRET_NAME, 'the name of a connector secret: upper-case letters, digits and _ (like GITHUB_WEBHOOK_SECRET)');
/** Headers a scheme may not name: they carry the request itself, or the service's own controls. */
const RESERVED_HEADERS = new Set(['host', 'content-type', 'content-length', 'transfer-encoding', 'connection', 'cookie', 'idempotency-key', 'callback-url', 'prefer']);
const headerName = z
  .string()
  .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, 'an HTTP header name (1-100 token characters)')
  .refine((header) => !RESERVED_HEADERS.has(header.toLowerCase()), 'a header of its own, not one the request or the service already uses');
const tolerance = z.number().int().min(TOLERANCE_BOUNDS.min).max(TOLERANCE_BOUNDS.max);
/** What every scheme but bearer names: the secret holding its key, one accepted during a rotation, and whether a bot token is taken too. */
const keyed = { secret: secretName, previousSecret: secretName.optional(), allowBearer: z.boolean().optional() };

/**
 * An integration's inbound auth (docs/inbound.md): `bearer` (the default), or a scheme with the secret
 * holding its key and its own options, their defaults filled in.
 */
export const inboundAuthBody = z
  .discriminatedUnion('scheme', [
    z.object({ scheme: z.literal('bearer') }).strict(),
    z.object({ scheme: z.enum(['github', 'shopify', 'twilio']), ...keyed }).strict(),
    z.object({ scheme: z.enum(['stripe', 'slack', 'hubspot-v3', 'standard-webhooks']), ...keyed, toleranceSeconds: tolerance.default(DEFAULT_TOLERANCE_SECONDS) }).strict(),
    z
      .object({
        scheme: z.literal('hmac'),
        ...keyed,
        header: headerName,
        algorithm: z.enum(HMAC_ALGORITHMS).default('sha256'),
        encoding: z.enum(HMAC_ENCODINGS).default('hex'),
        prefix: z.string().regex(/^[\x21-\x7e]{1,64}$/, '1-64 visible ASCII characters, such as sha256=').optional(),
        timestampHeader: headerName.optional(),
        toleranceSeconds: tolerance.optional(),
        deliveryIdHeader: headerName.optional(),
      })
      .strict()
      .refine((auth) => auth.toleranceSeconds === undefined || auth.timestampHeader !== undefined, { message: 'a tolerance needs a timestampHeader', path: ['toleranceSeconds'] }),
    z.object({ scheme: z.literal('basic'), ...keyed, deliveryIdHeader: headerName.optional() }).strict(),
    z.object({ scheme: z.literal('api-key'), ...keyed, header: headerName.default(DEFAULT_API_KEY_HEADER), deliveryIdHeader: headerName.optional() }).strict(),
  ])
  .refine((auth) => auth.scheme === 'bearer' || auth.previousSecret !== auth.secret, { message: 'the previous secret must be another secret', path: ['previousSecret'] });

/** One limit: a whole number within its bounds, the default when left out. */
const limit = (key: keyof ConnectorLimits) =>
  z.number().int().min(CONNECTOR_LIMIT_BOUNDS[key].min).max(CONNECTOR_LIMIT_BOUNDS[key].max).default(DEFAULT_CONNECTOR_LIMITS[key]);

/** Any subset of the limits; the others take their defaults. */
export const limitsBody = z
  .object({
    memoryMiB: limit('memoryMiB'),
    cpuSeconds: limit('cpuSeconds'),
    responseBodyKiB: limit('responseBodyKiB'),
    logKiB: limit('logKiB'),
    pendingCalls: limit('pendingCalls'),
  })
  .strict();

/** One file of the project a bundle was built from; sizes are checked after the shape (413). */
const source = z
  .object({
    path: z.string().superRefine((path, ctx) => {
      const problem = sourcePathProblem(path);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    content: z.string(),
  })
  .strict();

const sources = z
  .array(source)
  .max(MAX_CONNECTOR_SOURCES, `at most ${MAX_CONNECTOR_SOURCES} files`)
  .refine((files) => new Set(files.map((f) => f.path)).size === files.length, 'each path at most once')
  .default([]);

export const integrationBody = z
  .object({
    entityName: name,
    // Its size in bytes is checked after the shape (413).
    code: z.string().min(1),
    sources,
    pool: name.default(DEFAULT_POOL),
    timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).default(DEFAULT_TIMEOUT_SECONDS),
    allowedHosts: z.array(allowedHost).max(100).default([]),
    limits: limitsBody.prefault({}),
    callbackUrl: callbackUrl.nullable().default(null),
    // Bearer, the default, is stored as no inbound auth at all.
    inboundAuth: inboundAuthBody.optional().transform((auth) => (auth?.scheme === 'bearer' ? undefined : auth)),
  })
  .strict();

export const tokenBody = z
  .object({
    ttlSeconds: z.number().int().min(60).max(MAX_TOKEN_TTL_SECONDS).optional(),
    label: z.string().max(200).optional(),
  })
  .strict();

/** A page's `nextBefore`: where its last invocation sits in the listing (`<createdAt ms>_<id>`; opaque to callers). */
export const listCursor = (position: InvocationListPosition) => `${position.createdAt}_${position.id}`;
const LIST_CURSOR = /^(\d{1,15})_(\S{1,200})$/;

export const invocationListQuery = z.object({
  status: z.enum(INVOCATION_STATUSES).optional(),
  integrationId: name.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
  before: z
    .string()
    .regex(LIST_CURSOR, 'the nextBefore value of a previous page')
    .transform((cursor): InvocationListPosition => {
      const [, createdAt, id] = LIST_CURSOR.exec(cursor) ?? [];
      return { createdAt: Number(createdAt), id };
    })
    .optional(),
});

/** A steps page's `nextBefore`: its last step, as `<occurrence>_<name>` (opaque to callers). */
export const stepCursor = (step: Pick<JournalEntry, 'name' | 'occurrence'>) => `${step.occurrence}_${step.name}`;
// Occurrences are digits, so the first '_' ends one; a step's name has no control characters (isValidStepName).
const STEP_CURSOR = /^(\d{1,16})_(.+)$/;

function stepPosition(cursor: string): Pick<JournalEntry, 'name' | 'occurrence'> | null {
  const [, occurrence, name] = STEP_CURSOR.exec(cursor) ?? [];
  if (name === undefined || !isValidStepName(name)) return null;
  const position = { name, occurrence: Number(occurrence) };
  return Number.isSafeInteger(position.occurrence) && position.occurrence >= 1 ? position : null;
}

/** GET .../invocations/{id}/steps: a page of the journal, newest first. */
export const stepListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(50),
  before: z
    .string()
    .transform((cursor, ctx) => {
      const position = stepPosition(cursor);
      if (position === null) ctx.addIssue({ code: 'custom', message: 'the nextBefore value of a previous page' });
      return position ?? z.NEVER;
    })
    .optional(),
});

export const activityQuery = z.object({
  minutes: z.coerce.number().int().min(5).max(1440).default(60),
});
/** PUT replaces: a member left out (or null) returns to its default. */
export const quotaBody = z
  .object({
    ratePerSecond: z.number().positive().max(1_000_000).nullable().default(null),
    burst: z.number().int().min(1).max(10_000_000).nullable().default(null),
    maxInFlight: z.number().int().min(1).max(1_000_000).nullable().default(null),
  })
  .strict()
  .refine((q) => q.burst === null || q.ratePerSecond !== null, { message: 'a burst needs a ratePerSecond', path: ['burst'] });

/** PUT .../secrets/{name}: the value, checked for its size apart (a 400 naming the limit in bytes). */
export const secretBody = z.object({ value: z.string() }).strict();

const versionNumber = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER);

/** Two versions of one integration to compare. */
export const versionDiffQuery = z.object({ from: versionNumber, to: versionNumber });

/** Which stored requests a replay re-runs against the draft (at most MAX_REPLAY_REQUESTS), and what its outbound HTTP does. */
export const replayBody = z
  .object({
    last: z.number().int().min(1).max(MAX_REPLAY_REQUESTS, `a replay re-runs at most ${MAX_REPLAY_REQUESTS} stored requests`).optional(),
    ids: z.array(z.string().min(1).max(200)).min(1).max(MAX_REPLAY_REQUESTS, `a replay re-runs at most ${MAX_REPLAY_REQUESTS} stored requests`).optional(),
    outbound: z.enum(REPLAY_OUTBOUND).default('block'),
  })
  .strict()
  .refine((r) => r.last === undefined || r.ids === undefined, { message: 'give either last or ids, not both', path: ['ids'] });

/** The version a rollback deploys again. */
export const rollbackBody = z.object({ to: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER) }).strict();

/** `force=true` cancels the invocations in flight of what is deleted instead of refusing. */
export const deleteQuery = z.object({ force: z.enum(['true', 'false']).default('false').transform((force) => force === 'true') });
