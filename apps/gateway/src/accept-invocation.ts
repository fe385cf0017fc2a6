import { randomUUID } from 'node:crypto';
import {
  badRequest,
  defaultResponseContentType,
  formatRequestHeaders,
  GiError,
  idempotencyKeyReused,
  notFound,
  parseAsyncResponse,
  parseCallbackHeader,
  parseQuery,
  parseRequestBody,
  parseResponseContentType,
  singleControlValue,
  supportsAsync,
  unavailable,
} from '@gi/domain';
import type { Endpoint, IdempotencyRecord, Invocation, InvocationMode, NewInvocation } from '@gi/domain';
import type { GatewayDeps } from './gateway.deps';
import type { ReceivedRequest } from './receive-files';
import { requestFingerprint } from './request-fingerprint';

export interface InboundCall {
  botId: string;
  /** The token the call came with. */
  tokenId: string;
  entityName: string;
  integrationId: string;
  endpoint: Endpoint;
  rawQuery: string;
  rawHeaders: string[];
  contentType: string | undefined;
  /** The Callback-Url header, if sent. */
  callbackHeader: string | undefined;
  /** The caller's Idempotency-Key, if it sent one. */
  idempotencyKey: string | null;
  /** `Prefer: respond-async` without a wait: the call runs as if `asyncResponse=true`. */
  respondAsync: boolean;
  /**
   * Reads the body, called only once the call is known to be valid: the text of a body to parse, or a
   * multipart request already received (its files stored under the invocation id given).
   */
  readBody: (invocationId: string) => Promise<string | ReceivedRequest>;
}

/** An accepted call: a new invocation, or the repeat of the one its Idempotency-Key first created. */
export type Accepted =
  | { kind: 'new'; invocation: NewInvocation; mode: InvocationMode }
  | { kind: 'repeat'; invocation: Invocation; mode: InvocationMode };

/**
 * Validates an inbound webhook call and persists its invocation (the entity with RequestParams,
 * RequestHeaders and RequestBody); the caller publishes the job next. Persist before publish: once
 * this resolves the invocation is durable and will run. With an Idempotency-Key the invocation is
 * stored only when the key is new; a repeat of the same request stores nothing (its uploaded files are
 * removed) and gets the invocation the key first created; the key with another request is refused.
 */
export async function acceptInvocation(deps: GatewayDeps, call: InboundCall): Promise<Accepted> {
  const { settings, store, clock } = deps;
  // Back-pressure from the broker reaches the caller before anything is stored (a lost connection does
  // not: stored invocations are published by the sweeper once it is back).
  if (deps.bus.isBlocked()) throw unavailable('The message broker is refusing new work (resource alarm); nothing was accepted. Try again.', 10);
  const { requestParams, control } = parseQuery(call.rawQuery);
  const asyncMode = parseAsyncResponse(singleControlValue(control, 'asyncResponse'));
  if (asyncMode && !supportsAsync(settings.platformVersion)) {
    throw badRequest('Asynchronous mode (asyncResponse=true) needs platform version 9.10 or later.');
  }
  const mode = asyncMode || call.respondAsync ? 'async' : 'sync';
  const requested = singleControlValue(control, 'responseContentType');
  const responseContentType = requested
    ? parseResponseContentType(requested)
    : defaultResponseContentType(settings.platformVersion, mode);

  const integration = await store.catalog.resolveIntegration(call.botId, call.integrationId);
  if (!integration || integration.entityName !== call.entityName) {
    throw notFound(`No integration '${call.integrationId}' is defined on entity '${call.entityName}' of bot '${call.botId}'.`);
  }
  const callbackUrl = call.callbackHeader === undefined ? integration.callbackUrl : parseCallbackHeader(call.callbackHeader);
  // An integration's own callback URL was checked when it was deployed; a caller's is checked here.
  if (call.callbackHeader !== undefined && (await store.catalog.getSigningSecrets(call.botId, clock.now())).length === 0) {
    throw badRequest(`Callbacks are signed with the bot's signing secret, and bot '${call.botId}' has none yet; its administrator creates one first (gi callback-secret rotate).`);
  }

  const id = randomUUID();
  const read = await call.readBody(id);
  const { body, files } = typeof read === 'string' ? { body: parseRequestBody(call.contentType, read), files: undefined } : read;
  const now = clock.now();
  const invocation: NewInvocation = {
    id,
    botId: call.botId,
    tokenId: call.tokenId,
    entityName: call.entityName,
    integrationId: integration.integrationId,
    integrationVersion: integration.version,
    pool: integration.pool,
    mode,
    endpoint: call.endpoint,
    responseContentType,
    entity: {
      RequestParams: requestParams,
      RequestHeaders: formatRequestHeaders(call.rawHeaders),
      RequestBody: body,
      ResponseBody: null,
      ...(files ? { RequestFiles: files } : {}),
    },
    createdAt: now,
    expireAt: now + settings.invocationTtlMs,
    callbackUrl,
  };
  const record: IdempotencyRecord | null = call.idempotencyKey
    ? {
        botId: call.botId,
        key: call.idempotencyKey,
        fingerprint: requestFingerprint({ ...call, body: typeof read === 'string' ? read : { fields: read.body, files: read.files } }),
        invocationId: id,
        createdAt: now,
        // A key never outlives its invocation: a live key always leads to a stored outcome.
        expireAt: Math.min(now + settings.idempotencyKeyTtlMs, invocation.expireAt),
      }
    : null;
  const discardFiles = async () => {
    if (files) await deps.uploads?.files.deleteAll(invocation).catch((err) => deps.logger.warn({ err, invocationId: id }, 'files left for the sweep'));
  };
  let holder: IdempotencyRecord | null = null;
  try {
    if (record) holder = await store.invocations.createWithKey(invocation, record);
    else await store.invocations.create(invocation);
  } catch (error) {
    deps.logger.error({ err: error }, 'store write failed');
    await discardFiles();
    throw unavailable('The request could not be stored; nothing was accepted. Try again.');
  }
  if (record && holder) {
    await discardFiles();
    if (holder.fingerprint !== record.fingerprint) throw idempotencyKeyReused();
    const original = await store.invocations.get({ botId: call.botId, id: holder.invocationId });
    if (!original) throw notFound('The invocation of this Idempotency-Key no longer exists (expired).');
    return { kind: 'repeat', invocation: original, mode };
  }
  deps.afterPersist?.();
  return { kind: 'new', invocation, mode };
}

/** Publishes the job of a stored invocation. */
export async function publishInvocation(deps: GatewayDeps, invocation: Pick<NewInvocation, 'botId' | 'id' | 'pool' | 'mode'>): Promise<void> {
  try {
    // A sync caller waits here: the executor answers this gateway directly, not only by broadcast.
    const awaitReply = invocation.mode === 'sync';
    await deps.bus.publish({ kind: 'job', version: 1, botId: invocation.botId, invocationId: invocation.id, pool: invocation.pool }, { awaitReply });
  } catch (error) {
    // The invocation is stored: the sweeper republishes it, so the caller is told it was accepted.
    deps.logger.warn({ err: error, invocationId: invocation.id }, 'publish failed; left for the sweeper');
  }
}

export function pollLocation(platformSegment: string, botId: string, invocationId: string): string {
  return `/api/${platformSegment}/${encodeURIComponent(botId)}/GetGenericIntegrationResponse?invocationId=${invocationId}`;
}

export const syncTimedOut = (invocationId: string, location: string, seconds: number) =>
  new GiError('timeout', 'Sync wait timed out', `The job did not finish within ${seconds} s; it goes on and its result can be polled.`, {
    extensions: { invocationId },
    headers: { Location: location },
  });
