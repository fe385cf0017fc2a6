import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Next } from 'koa';
import { contextFrom, giTracer, traceContextOf } from '@gi/observability';

/**
 * A server span per request, continuing the caller's W3C trace context (`traceparent`, `tracestate`),
 * named by method and route template (never the raw path: ids are tenant data, and unbounded). The
 * reply carries the span's own `traceparent`, so a caller can find its call in the traces. Outermost,
 * so the span sees the status actually sent, problem details included.
 */
export function httpTracing() {
  return async (ctx: Context, next: Next) => {
    const parent = contextFrom(ctx.headers);
    const span = giTracer().startSpan(ctx.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method, 'url.scheme': ctx.protocol } }, parent);
    const active = trace.setSpan(parent, span);
    const own = traceContextOf(active);
    if (own) ctx.set('traceparent', own.traceparent);
    try {
      await context.with(active, next);
    } finally {
      const route = (ctx as Context & { _matchedRoute?: string })._matchedRoute;
      if (typeof route === 'string') {
        span.updateName(`${ctx.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) {
        span.setAttribute('error.type', String(ctx.status));
        span.setStatus({ code: SpanStatusCode.ERROR });
      }
      span.end();
    }
  };
}
