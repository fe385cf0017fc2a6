import { publicAccess } from './access';
import type { Metrics } from '@gi/observability';
import type { Readiness } from './readiness';
import { Routes } from './routes';

/**
 * /healthz (the process answers), /readyz (the dependencies its readiness covers, each by name with its
 * verdict) and /metrics (Prometheus): for probes and scrapers, public.
 */
export function operationsRouter(metrics: Metrics, readiness: () => Promise<Readiness>): Routes {
  return new Routes()
    .get('/healthz', publicAccess, (ctx) => {
      ctx.body = { status: 'ok' };
    })
    .get('/readyz', publicAccess, async (ctx) => {
      const { ready, checks } = await readiness();
      ctx.status = ready ? 200 : 503;
      ctx.body = { status: ready ? 'ready' : 'not ready', checks };
    })
    .get('/metrics', publicAccess, async (ctx) => {
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.exposition();
    });
}
