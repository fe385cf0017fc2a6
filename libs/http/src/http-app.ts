import { setImmediate } from 'node:timers/promises';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { tracingEnabled } from '@gi/observability';
import type { Logger, Metrics } from '@gi/observability';
import { httpTracing } from './http-tracing';
import { operationsRouter } from './operations.router';
import { readinessOf } from './readiness';
import type { Readiness } from './readiness';
import { problemDetails } from './problem-details';
import { setReplyHeader } from './reply-header';
import { observeRequests } from './request-observer';
import type { AccessLogLevel } from './request-observer';
import type { Routes } from './routes';
import { stopReading } from './stop-reading';

export interface HttpAppOptions {
  logger: Logger;
  metrics: Metrics;
  /** Readiness (/readyz): the dependencies the process covers (readinessOf); none, always ready, when absent. */
  ready?: () => Promise<Readiness>;
  /** The service's routes; /healthz, /readyz and /metrics come with every app. */
  routes: Routes[];
  /** The level of the one access line per request (ACCESS_LOG); `info` unless given. */
  accessLog?: AccessLogLevel;
}

/**
 * A reply sent before the request's body was read to its end (a refused call) does not read the rest:
 * it says `Connection: close`, and the connection closes. Every reply holds data of one caller: none is
 * stored by a cache on the way unless its route says otherwise (the console's static files).
 */
async function replyHygiene(ctx: Context, next: Next): Promise<void> {
  setReplyHeader(ctx, 'Cache-Control', 'no-store');
  try {
    await next();
  } finally {
    // A call answered without waiting on anything (a missing token, an unknown path) is answered before
    // Node has parsed the rest of what already arrived: let it, then see whether the body is all there.
    if (!ctx.req.complete) await setImmediate();
    if (stopReading(ctx.req)) ctx.set('Connection', 'close');
  }
}

/**
 * A Koa app with the shared middleware around the given routes. Never listens. The request observer
 * (request id, metrics, access line) is outermost, so it sees every reply as sent, problems included.
 */
export function createHttpApp({ logger, metrics, ready = readinessOf({}), routes, accessLog = 'info' }: HttpAppOptions): Koa {
  const app = new Koa();
  app.proxy = true;
  app.silent = true;
  // Outermost, and only while tracing is on (otherwise requests pay nothing for it): the span sees the final status.
  if (tracingEnabled()) app.use(httpTracing());
  app.use(observeRequests({ logger, metrics, accessLog }));
  app.use(replyHygiene);
  app.use(problemDetails(logger));
  for (const table of [operationsRouter(metrics, ready), ...routes]) app.use(table.middleware());
  return app;
}
