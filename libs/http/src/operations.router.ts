import { publicAccess } from './access';
import type { Metrics } from '@gi/observability';
import { Routes } from './routes';

/** /healthz (the process answers), /readyz (its dependencies answer) and /metrics (Prometheus): for probes and scrapers, public. */
export function operationsRouter(metrics: Metrics, ready: () => Promise<boolean>): Routes {
  return new Routes()
    .get('/healthz', publicAccess, (ctx) => {
      ctx.body = { status: 'ok' };
    })
    .get('/readyz', publicAccess, async (ctx) => {
      const ok = await ready().catch(() => false);
      ctx.status = ok ? 200 : 503;
      ctx.body = { status: ok ? 'ready' : 'not ready' };
    })
    .get('/metrics', publicAccess, async (ctx) => {
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.exposition();
    });
}
