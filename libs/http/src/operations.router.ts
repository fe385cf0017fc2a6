import Router from '@koa/router';
import type { Metrics } from './metrics';

/** /healthz (the process answers), /readyz (its dependencies answer) and /metrics (Prometheus). */
export function operationsRouter(metrics: Metrics, ready: () => Promise<boolean>): Router {
  const router = new Router();
  router.get('/healthz', (ctx) => {
    ctx.body = { status: 'ok' };
  });
  router.get('/readyz', async (ctx) => {
    const ok = await ready().catch(() => false);
    ctx.status = ok ? 200 : 503;
    ctx.body = { status: ok ? 'ready' : 'not ready' };
  });
  router.get('/metrics', async (ctx) => {
    ctx.type = metrics.registry.contentType;
    ctx.body = await metrics.registry.metrics();
  });
  return router;
}
