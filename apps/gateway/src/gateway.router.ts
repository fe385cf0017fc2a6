import Router from '@koa/router';
import type { Context } from 'koa';
import { assertName, CALLBACK_HEADER, finalReply, GiError, notFound, supportsFileTransfer } from '@gi/domain';
import type { Endpoint } from '@gi/domain';
import { readTextBody } from '@gi/http';
import { acceptInvocation, pollLocation, publishInvocation, syncTimedOut } from './accept-invocation';
import { fileTransferReader } from './file-transfer';
import type { GatewayDeps } from './gateway.deps';

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
    const admission = await deps.quotas?.admit(botId, tokenId);
    let invocation;
    try {
      const readFiles = endpoint === 'GenericIntegrationFileTransfer' ? fileTransferReader(ctx, deps, botId) : null;
      invocation = await acceptInvocation(deps, {
        botId,
        tokenId,
        entityName,
        integrationId,
        endpoint,
        rawQuery: ctx.querystring,
        rawHeaders: ctx.req.rawHeaders,
        contentType: ctx.get('content-type') || undefined,
        callbackHeader: ctx.headers[CALLBACK_HEADER.toLowerCase()] === undefined ? undefined : ctx.get(CALLBACK_HEADER),
        readBody: readFiles ?? (() => readTextBody(ctx, settings.maxBodyBytes)),
      });
    } catch (error) {
      // Nothing was stored: the call does not count as in flight.
      admission?.release();
      throw error;
    }
    const location = pollLocation(settings.platformSegment, botId, invocation.id);

    if (invocation.mode === 'async') {
      await publishInvocation(deps, invocation);
      ctx.status = 202;
      ctx.set('Location', location);
      ctx.body = { invocationId: invocation.id, status: 'Running' };
      return;
    }

    // Wait for the completion event (registered before publishing, so it cannot be missed); a hang-up
    // by the caller does not cancel the job.
    const waiting = deps.waiter.wait(invocation.id, settings.syncTimeoutMs);
    ctx.res.once('close', waiting.cancel);
    await publishInvocation(deps, invocation);
    await waiting.promise;
    const finished = await deps.store.invocations.get(invocation);
    if (!finished?.outcome) throw syncTimedOut(invocation.id, location, settings.syncTimeoutMs / 1000);
    ctx.set('X-Invocation-Id', invocation.id);
    const reply = finalReply(finished);
    ctx.status = 200;
    ctx.type = reply.contentType;
    ctx.body = reply.payload;
  };

  for (const endpoint of ['GenericIntegration', 'GenericIntegrationFileTransfer'] as const) {
    const path = `/:botId/:entityName/:integrationId/${endpoint}`;
    router.post(path, handle(endpoint));
    router.all(path, methodNotAllowed);
  }
  return router;
}
