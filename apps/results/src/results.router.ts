import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import { finalReply, GiError, isTerminal, notFound, pendingReply, POLL_STEPS, supportsAsync, webhookApiRoot } from '@gi/domain';
import type { InvocationState, StepSummary } from '@gi/domain';
import { botAccess, noteInvocation, Routes } from '@gi/http';
import { awaitFinished, cancelInvocation } from '@gi/use-cases';
import { parseInvocationId, parsePollQuery } from './poll-query';
import { ifNoneMatch } from './if-none-match';
import type { ResultsDeps } from './results.deps';
import { RunTimes } from './run-times';

/**
 * GET .../GetGenericIntegrationResponse (docs/openapi.yaml): answers at once when the invocation is
 * finished, otherwise holds the request until its completion event or `waitSeconds` (awaitFinished).
 * Every reply carries an ETag; a poll whose If-None-Match still matches gets 304 without a body.
 * DELETE on the same URL (the `Location` of an async start) cancels the invocation for its bot. Both
 * take a token of the bot in the path.
 */
export function resultsRouter(deps: ResultsDeps): Routes {
  const { settings, store } = deps;
  const routes = new Routes({ prefix: webhookApiRoot(settings.platformSegment) });
  const path = '/:botId/GetGenericIntegrationResponse';
  const bot = botAccess(deps.tokens);
  const runTimes = new RunTimes(store.invocations, deps.clock);

  const botOf = (ctx: Context) => {
    if (!supportsAsync(settings.platformVersion)) throw notFound('GetGenericIntegrationResponse needs platform version 9.10 or later.');
    return (ctx.params as Record<string, string>).botId;
  };

  routes.get(path, bot, async (ctx: Context) => {
    const botId = botOf(ctx);
    const query = parsePollQuery(ctx.query, settings.defaultWaitSeconds);
    noteInvocation(ctx, query.invocationId);
    const ref = { botId, id: query.invocationId };

    // The state alone: no answer needs the entity or the logs.
    let invocation: InvocationState | null = await store.invocations.getState(ref);
    if (!invocation) throw notFound(`No invocation '${query.invocationId.slice(0, 80)}' exists for this bot (unknown or expired).`);
    if (!isTerminal(invocation.status) && query.waitSeconds > 0) {
      const hangUp = (stop: () => void) => ctx.res.once('close', stop);
      invocation = (await awaitFinished({ waiter: deps.waiter, invocations: store.invocations }, ref, { waitMs: query.waitSeconds * 1000, hangUp })) ?? invocation;
    }
    if (isTerminal(invocation.status)) return finalAnswer(ctx, invocation, query.responseContentType);
    ctx.set('Retry-After', String(await runTimes.retryAfter(invocation)));
    const steps = invocation.steps > 0 ? await store.journal.list(ref, { limit: POLL_STEPS }) : [];
    pendingAnswer(ctx, invocation, steps);
  });

  routes.delete(path, bot, async (ctx: Context) => {
    const botId = botOf(ctx);
    const invocationId = parseInvocationId(ctx.query);
    noteInvocation(ctx, invocationId);
    await cancelInvocation({ invocations: store.invocations, bus: deps.bus, clock: deps.clock }, { botId, id: invocationId }, 'caller');
    ctx.body = { invocationId, status: 'Cancelled' };
  });

  routes.otherMethods(path, bot, (ctx) => {
    throw new GiError('method_not_allowed', 'Method not allowed', `${ctx.method} is not supported here; use GET (poll) or DELETE (cancel).`, {
      headers: { Allow: 'GET, DELETE' },
    });
  });
  return routes;
}

/** 202 with where the run stands; its ETag changes with the status, the attempt, the progress, the wait and the steps. */
function pendingAnswer(ctx: Context, invocation: InvocationState, steps: StepSummary[]): void {
  const body = pendingReply(invocation, steps);
  answer(ctx, 202, etagOf(invocation.id, [body.status, body.attempt, body.progress ?? null, body.waiting ?? null, body.latestSteps ?? null]), () => (ctx.body = body));
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
  ctx.status = status;
  ctx.set('ETag', etag);
  if (ifNoneMatch(ctx.get('if-none-match') || undefined, etag)) ctx.status = 304;
  else setBody();
}

const etagOf = (invocationId: string, state: unknown[]) =>
  `"${createHash('sha256').update(JSON.stringify([invocationId, ...state])).digest('base64url').slice(0, 22)}"`;
