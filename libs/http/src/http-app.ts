import Koa from 'koa';
import type Router from '@koa/router';
import type { Logger } from 'pino';
import type { Metrics } from './metrics';
import { httpMetrics } from './metrics';
import { operationsRouter } from './operations.router';
import { problemDetails } from './problem-details';

export interface HttpAppOptions {
  logger: Logger;
  metrics: Metrics;
  /** Readiness: the store and bus answer. */
  ready: () => Promise<boolean>;
  routers: Router[];
}

/** A Koa app with the shared middleware (problem details, metrics, health) around the given routers. Never listens. */
export function createHttpApp({ logger, metrics, ready, routers }: HttpAppOptions): Koa {
  const app = new Koa();
  app.proxy = true;
  app.silent = true;
  app.use(problemDetails(logger));
  app.use(httpMetrics(metrics));
  for (const router of [operationsRouter(metrics, ready), ...routers]) app.use(router.routes());
  return app;
}
