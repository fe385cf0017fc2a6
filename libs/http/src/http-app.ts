import { setImmediate } from 'node:timers/promises';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { tracingEnabled } from '@gi/observability';
import type { Logger, Metrics } from '@gi/observability';
import { httpMetrics } from './http-metrics';
import { httpTracing } from './http-tracing';
import { operationsRouter } from './operations.router';
import { problemDetails } from './problem-details';
import type { Routes } from './routes';
import { stopReading } from './stop-reading';

export interface HttpAppOptions {
  logger: Logger;
  metrics: Metrics;
  /** Readiness: the store and bus answer. */
  ready: () => Promise<boolean>;
  /** The service's routes; /healthz, /readyz and /metrics come with every app. */
  routes: Routes[];
}

/**
 * A reply sent before the request's body was read to its end (a refused call) does not read the rest:
 * it says `Connection: close`, and the connection closes. Every reply holds data of one caller: none is
 * stored by a cache on the way unless its route says otherwise (the console's static files).
 */
async function replyHygiene(ctx: Context, next: Next): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  try {
    await next();
  } finally {
    // A call answered without waiting on anything (a missing token, an unknown path) is answered before
    // Node has parsed the rest of what already arrived: let it, then see whether the body is all there.
    if (!ctx.req.complete) await setImmediate();
    if (stopReading(ctx.req)) ctx.set('Connection', 'close');
  }
}

/** A Koa app with the shared middleware (problem details, metrics, health) around the given routes. Never listens. */
export function createHttpApp({ logger, metrics, ready, routes }: HttpAppOptions): Koa {
  const app = new Koa();
  app.proxy = true;
  app.silent = true;
  // Only while tracing is on: otherwise requests pay nothing for it.
  if (tracingEnabled()) app.use(httpTracing());
  app.use(replyHygiene);
  app.use(problemDetails(logger));
  app.use(httpMetrics(metrics));
  for (const table of [operationsRouter(metrics, ready), ...routes]) app.use(table.middleware());
  return app;
}
