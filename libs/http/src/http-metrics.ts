import type { Context, Next } from 'koa';
import type { Metrics } from '@gi/observability';

/** Times every request, labelled by the matched route pattern (never the raw path: ids would explode cardinality). */
export function httpMetrics(metrics: Metrics) {
  return async (ctx: Context, next: Next) => {
    const end = metrics.httpDuration.startTimer();
    try {
      await next();
    } finally {
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      end({ route: String(route), method: ctx.method, status: String(ctx.status) });
    }
  };
}
