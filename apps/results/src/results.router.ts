import { createHash } from 'node:crypto';
import Router from '@koa/router';
import type { Context } from 'koa';
import { cancelInvocation, finalReply, GiError, isTerminal, notFound, pendingReply, supportsAsync } from '@gi/domain';
import type { InvocationState } from '@gi/domain';
import { parseInvocationId, parsePollQuery } from './poll-query';
import { ifNoneMatch } from './if-none-match';
import type { ResultsDeps } from './results.deps';
import { RunTimes } from './run-times';

/**
 * GET .../GetGenericIntegrationResponse (DESIGN 3.2): answers at once when the invocation is finished,
 * otherwise holds the request until its completion event or `waitSeconds`, then reads the store once.
 * Every reply carries an ETag; a poll whose If-None-Match still matches gets 304 without a body.
 * DELETE on the same URL (the `Location` of an async start) cancels the invocation for its bot.
 */
export function resultsRouter(deps: ResultsDeps): Router {
  const { settings, store } = deps;
  const router = new Router({ prefix: `/api/${settings.platformSegment}` });
  const path = '/:botId/GetGenericIntegrationResponse';
  const runTimes = new RunTimes(store.invocations, deps.clock);

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

    // The state alone: no answer needs the entity or the logs.
    let invocation = await store.invocations.getState(ref);
    if (!invocation) throw notFound(`No invocation '${query.invocationId.slice(0, 80)}' exists for this bot (unknown or expired).`);
    if (!isTerminal(invocation.status) && query.waitSeconds > 0) {
      const waiting = deps.waiter.wait(ref.id, query.waitSeconds * 1000);
      ctx.res.once('close', waiting.cancel);
      // Re-read after registering: the run may have finished between the first read and the registration.
      invocation = (await store.invocations.getState(ref)) ?? invocation;
      if (isTerminal(invocation.status)) waiting.cancel();
      else {
        await waiting.promise;
        invocation = (await store.invocations.getState(ref)) ?? invocation;
      }
    }
    if (isTerminal(invocation.status)) return finalAnswer(ctx, invocation, query.responseContentType);
    ctx.set('Retry-After', String(await runTimes.retryAfter(invocation)));
    pendingAnswer(ctx, invocation);
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

/** 202 with where the run stands; its ETag changes with the status, the attempt and the progress. */
function pendingAnswer(ctx: Context, invocation: InvocationState): void {
  const body = pendingReply(invocation);
  answer(ctx, 202, etagOf(invocation.id, [body.status, body.attempt, body.progress ?? null]), () => (ctx.body = body));
}

/** The outcome, exactly as the sync call answered it; it never changes once there. */
function finalAnswer(ctx: Context, invocation: InvocationState, mediaType: string | undefined): void {
  const rendered = finalReply(invocation, mediaType);
  answer(ctx, 200, etagOf(invocation.id, [invocation.status, rendered.contentType]), () => {
    ctx.type = rendered.contentType;
    ctx.body = rendered.payload;
  });
}

/** Sets the status and ETag, then answers 304 when the poll's If-None-Match matches, else the body. */
function answer(ctx: Context, status: number, etag: string, setBody: () => void): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.status = status;
  ctx.set('ETag', etag);
  if (ifNoneMatch(ctx.get('if-none-match') || undefined, etag)) ctx.status = 304;
  else setBody();
}

const etagOf = (invocationId: string, state: unknown[]) =>
  `"${createHash('sha256').update(JSON.stringify([invocationId, ...state])).digest('base64url').slice(0, 22)}"`;
