import Router from '@koa/router';
import type { Context } from 'koa';
import { assertName, CALLBACK_HEADER, GiError, notFound, parseIdempotencyKey, supportsAsync, supportsFileTransfer } from '@gi/domain';
import type { Endpoint } from '@gi/domain';
import { readTextBody } from '@gi/http';
import { acceptInvocation } from './accept-invocation';
import { answerCall } from './answer-call';
import { fileTransferReader } from './file-transfer';
import type { GatewayDeps } from './gateway.deps';
import { parsePrefer } from './prefer';

const methodNotAllowed = (ctx: Context) => {
  throw new GiError('method_not_allowed', 'Method not allowed', `${ctx.method} is not supported here; use POST.`, { headers: { Allow: 'POST' } });
};

/** POST .../GenericIntegration and .../GenericIntegrationFileTransfer (DESIGN 3.1). */
export function gatewayRouter(deps: GatewayDeps): Router {
  const { settings } = deps;
  const router = new Router({ prefix: `/api/${settings.platformSegment}` });

  const handle = (endpoint: Endpoint) => async (ctx: Context) => {
    const { botId, entityName, integrationId } = ctx.params as Record<string, string>;
    if (endpoint === 'GenericIntegrationFileTransfer' && !supportsFileTransfer(settings.platformVersion)) {
      throw notFound('GenericIntegrationFileTransfer needs platform version 9.19 or later.');
    }
    const { tokenId } = await deps.tokens.verify(ctx.get('authorization') || undefined, botId);
    assertName('entityName', entityName);
    assertName('integrationId', integrationId);
    const idempotencyKey = parseIdempotencyKey(headerValues(ctx.req.rawHeaders, 'idempotency-key'));
    // Without async mode (below 9.10) there is nothing to poll: respond-async is not honoured.
    const prefer = parsePrefer(ctx.get('prefer') || undefined);
    if (!supportsAsync(settings.platformVersion)) prefer.respondAsync = false;
    const callbackHeader = ctx.headers[CALLBACK_HEADER.toLowerCase()] === undefined ? undefined : ctx.get(CALLBACK_HEADER);

    const admission = await deps.quotas?.admit(botId, tokenId);
    let accepted;
    try {
      const readFiles = endpoint === 'GenericIntegrationFileTransfer' ? fileTransferReader(ctx, deps, botId) : null;
      accepted = await acceptInvocation(deps, {
        botId,
        tokenId,
        entityName,
        integrationId,
        endpoint,
        rawQuery: ctx.querystring,
        rawHeaders: ctx.req.rawHeaders,
        contentType: ctx.get('content-type') || undefined,
        idempotencyKey,
        respondAsync: prefer.respondAsync && prefer.waitSeconds === undefined,
        callbackHeader,
        readBody: readFiles ?? (() => readTextBody(ctx, settings.maxBodyBytes)),
      });
    } catch (error) {
      // Nothing was stored: the call does not count as in flight.
      admission?.release();
      throw error;
    }
    // A repeat of an Idempotency-Key stores nothing new either.
    if (accepted.kind === 'new') admission?.stored();
    else admission?.release();
    await answerCall(ctx, deps, accepted, prefer);
  };

  for (const endpoint of ['GenericIntegration', 'GenericIntegrationFileTransfer'] as const) {
    const path = `/:botId/:entityName/:integrationId/${endpoint}`;
    router.post(path, handle(endpoint));
    router.all(path, methodNotAllowed);
  }
  return router;
}

/** Every value of a request header, one per header line (Node would join them with commas). */
function headerValues(rawHeaders: readonly string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === name) values.push(rawHeaders[i + 1]);
  return values;
}
