import { v7 as timeOrderedUuid } from 'uuid';
import {
  assertCanSignCallbacks,
  badRequest,
  defaultResponseContentType,
  formatRequestHeaders,
  notFound,
  parseAsyncResponse,
  parseCallbackHeader,
  parseQuery,
  parseResponseContentType,
  requestBodyJson,
  rawBodyWithin,
  requestEntityJson,
  singleControlValue,
  supportsAsync,
  unavailable,
} from '@gi/domain';
import type { IdempotencyRecord, InvocationMode, NewInvocation } from '@gi/domain';
import { withoutByteOrderMark } from '@gi/http';
import type { GatewayDeps } from './gateway.deps';
import type { BodyReader, WebhookCall } from './webhook-call';
import type { ReceivedRequest } from './receive-files';
import { deliveryKey, requestFingerprint } from './request-fingerprint';

/** A call found valid, its body read: the invocation to store, and the Idempotency-Key record to store with it. */
export interface AcceptedCall {
  invocation: NewInvocation;
  mode: InvocationMode;
  /** Null without an Idempotency-Key. */
  record: IdempotencyRecord | null;
  /** The call uploaded files (stored under the invocation id already). */
  hasFiles: boolean;
  /** A sync call's place among its bot's waits (WaitLimit): given back once its wait ends. */
  endWait?: () => void;
}

/**
 * Step 2 of a webhook call: validates it (the broker's back-pressure, the query, the integration, a
 * caller's callback URL), then reads its body and builds the invocation: the entity with RequestParams,
 * RequestHeaders and RequestBody, pinned to the integration's current version. Nothing is stored yet.
 */
export async function acceptCall(deps: GatewayDeps, call: WebhookCall, readBody: BodyReader): Promise<AcceptedCall> {
  const { settings } = deps;
  // Back-pressure from the broker reaches the caller before anything is stored (a lost connection does
  // not: stored invocations are published by the sweeper once it is back).
  if (deps.bus.isBlocked()) throw unavailable('The message broker is refusing new work (resource alarm); nothing was accepted. Try again.', 10);
  const { requestParams, control } = parseQuery(call.rawQuery);
  const asyncMode = parseAsyncResponse(singleControlValue(control, 'asyncResponse'));
  if (asyncMode && !supportsAsync(settings.platformVersion)) {
    throw badRequest('Asynchronous mode (asyncResponse=true) needs platform version 9.10 or later.');
  }
  // `Prefer: respond-async` without a wait: the call runs as if `asyncResponse=true`.
  const mode = asyncMode || (call.prefer.respondAsync && call.prefer.waitSeconds === undefined) ? 'async' : 'sync';
  const requested = singleControlValue(control, 'responseContentType');
  const responseContentType = requested
    ? parseResponseContentType(requested)
    : defaultResponseContentType(settings.platformVersion, mode);
  // A sync call holds its connection while it waits: within its bot's waits, or 429 before its body is read.
  const endWait = mode === 'sync' ? deps.waits?.take(call.botId) : undefined;
  try {
    return { ...(await readCall(deps, call, readBody, { requestParams, mode, responseContentType })), endWait };
  } catch (error) {
    endWait?.();
    throw error;
  }
}

/** The rest of acceptCall, once the call's mode is known: its integration and callback checked, its body read. */
async function readCall(
  deps: GatewayDeps,
  call: WebhookCall,
  readBody: BodyReader,
  { requestParams, mode, responseContentType }: { requestParams: string; mode: InvocationMode; responseContentType: string },
): Promise<AcceptedCall> {
  const { settings, store, clock } = deps;
  const integration = call.integration !== undefined ? call.integration : await store.catalog.resolveIntegration(call.botId, call.integrationId);
  if (!integration || integration.entityName !== call.entityName) {
    throw notFound(`No integration '${call.integrationId}' is defined on entity '${call.entityName}' of bot '${call.botId}'.`);
  }
  const callbackUrl = call.callbackHeader === undefined ? integration.callbackUrl : parseCallbackHeader(call.callbackHeader);
  // An integration's own callback URL was checked when it was deployed; a caller's is checked here.
  if (call.callbackHeader !== undefined) {
    await assertCanSignCallbacks(store.catalog, call.botId, clock.now(), 'its administrator creates one first (gi callback-secret rotate)');
  }

  // A UUIDv7: its first 48 bits are the time, so the ids of calls made one after another sort together
  // and the store's id index grows at its end, not at a random page per call; 74 random bits keep it
  // unguessable (docs/decisions.md).
  const id = timeOrderedUuid();
  const read = await readBody(id);
  // A signed body was checked by its reader, on its bytes as received, before anything parsed it.
  const inbound = call.inbound ? call.inbound.verified : null;
  const { bodyJson, files, rawBody, fingerprinted } = bodyOf(read, call.contentType, settings.maxJsonDepth);
  const now = clock.now();
  const entityJson = requestEntityJson(
    { RequestParams: requestParams, RequestHeaders: formatRequestHeaders(call.rawHeaders, call.credentialHeaders), ResponseBody: null, ...(files ? { RequestFiles: files } : {}) },
    bodyJson,
  );
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
    entityJson,
    rawBody: rawBodyWithin(entityJson, rawBody),
    inbound,
    createdAt: now,
    expireAt: now + settings.invocationTtlMs,
    callbackUrl,
  };
  // The caller's own Idempotency-Key, else the producer's delivery id: a redelivery gets the first answer.
  const delivery = call.idempotencyKey === null && inbound?.deliveryId ? deliveryKey(integration.integrationId, { scheme: inbound.scheme, deliveryId: inbound.deliveryId }) : null;
  const key = call.idempotencyKey ?? delivery?.key ?? null;
  const record: IdempotencyRecord | null = key
    ? {
        botId: call.botId,
        key,
        fingerprint: delivery ? delivery.fingerprint : requestFingerprint({ ...call, body: fingerprinted }),
        invocationId: id,
        createdAt: now,
        // A key never outlives its invocation: a live key always leads to a stored outcome.
        expireAt: Math.min(now + settings.idempotencyKeyTtlMs, invocation.expireAt),
      }
    : null;
  return { invocation, mode, record, hasFiles: files !== undefined };
}

/**
 * What a call's body gives: RequestBody as JSON text (and RequestFiles), the body exactly as sent for
 * connectors that check a signature over it (GetRawRequestBody; a multipart request has no single body
 * to keep), and what the Idempotency-Key fingerprint counts.
 */
function bodyOf(read: string | ReceivedRequest, contentType: string | undefined, maxJsonDepth: number) {
  if (typeof read !== 'string') return { bodyJson: JSON.stringify(read.body), files: read.files, rawBody: null, fingerprinted: { fields: read.body, files: read.files } };
  const text = withoutByteOrderMark(read);
  return { bodyJson: requestBodyJson(contentType, text, maxJsonDepth), files: undefined, rawBody: read, fingerprinted: text };
}
