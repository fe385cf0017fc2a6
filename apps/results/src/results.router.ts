import Router from '@koa/router';
import type { Context } from 'koa';
import { cancelInvocation, finalReply, GiError, isTerminal, notFound, pendingReply, supportsAsync } from '@gi/domain';
import type { Invocation } from '@gi/domain';
import { parseInvocationId, parsePollQuery } from './poll-query';
import type { ResultsDeps } from './results.deps';

/**
 * GET .../GetGenericIntegrationResponse (DESIGN 3.2): answers at once when the invocation is finished,
 * otherwise holds the request until its completion event or `waitSeconds`, then reads the store once.
 * DELETE on the same URL (the `Location` of an async start) cancels the invocation for its bot.
 */
export function resultsRouter(deps: ResultsDeps): Router {
  const { settings, store } = deps;
  const router = new Router({ prefix: `/api/${settings.platformSegment}` });
  const path = '/:botId/GetGenericIntegrationResponse';

  const authorize = async (ctx: Context) => {
    if (!supportsAsync(settings.platformVersion)) throw notFound('GetGenericIntegrationResponse needs platform version 9.10 or later.');
    const { botId } = ctx.params as Record<string, string>;
    await deps.tokens.verify(ctx.get('authorization') || undefined, botId);
    return botId;
  };

  router.get(path, async (ctx: Context) => {
    const botId = await authorize(ctx);
    const query = parsePollQuery(ctx.query, settings.defaultWaitSeconds);
    const ref = { botId, id: query.invocationId };

    let invocation = await store.invocations.get(ref);
    if (!invocation) throw notFound(`No invocation '${query.invocationId.slice(0, 80)}' exists for this bot (unknown or expired).`);
    if (!isTerminal(invocation.status) && query.waitSeconds > 0) {
      const waiting = deps.waiter.wait(ref.id, query.waitSeconds * 1000);
      ctx.res.once('close', waiting.cancel);
      // Re-read after registering: the run may have finished between the first read and the registration.
      invocation = (await store.invocations.get(ref)) ?? invocation;
      if (isTerminal(invocation.status)) waiting.cancel();
      else {
        await waiting.promise;
        invocation = (await store.invocations.get(ref)) ?? invocation;
      }
    }
    reply(ctx, invocation, query.responseContentType, query.waitSeconds);
  });

  router.delete(path, async (ctx: Context) => {
    const botId = await authorize(ctx);
    const invocationId = parseInvocationId(ctx.query);
    await cancelInvocation({ invocations: store.invocations, bus: deps.bus, clock: deps.clock }, { botId, id: invocationId }, 'caller');
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { invocationId, status: 'Cancelled' };
  });

  router.all(path, (ctx) => {
    throw new GiError('method_not_allowed', 'Method not allowed', `${ctx.method} is not supported here; use GET (poll) or DELETE (cancel).`, {
      headers: { Allow: 'GET, DELETE' },
    });
  });
  return router;
}

function reply(ctx: Context, invocation: Invocation, mediaType: string | undefined, waitedSeconds: number): void {
  ctx.set('Cache-Control', 'no-store');
  if (!isTerminal(invocation.status)) {
    ctx.status = 202;
    // A held poll may come back at once; a short poll should not hammer the service.
    ctx.set('Retry-After', waitedSeconds >= 5 ? '1' : '5');
    ctx.body = pendingReply(invocation);
    return;
  }
  const rendered = finalReply(invocation, mediaType);
  ctx.status = 200;
  ctx.type = rendered.contentType;
  ctx.body = rendered.payload;
}
