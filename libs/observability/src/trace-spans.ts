import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Context, Span, SpanOptions } from '@opentelemetry/api';
import { isTraceparent, isTracestate } from '@gi/domain';
import type { TraceContext } from '@gi/domain';

/** The tracer of every span this service makes; the API's no-op one while tracing is off. */
export const giTracer = () => trace.getTracer('generic-integration');

/** The W3C trace context of `ctx` (the active one by default), to carry to another process; none while tracing is off. */
export function traceContextOf(ctx: Context = context.active()): TraceContext | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (!isTraceparent(carrier.traceparent)) return undefined;
  return isTracestate(carrier.tracestate) && carrier.tracestate !== '' ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}

/** The context a carried trace context continues (the root when there is none): the parent of the spans made in it. */
export function contextFrom(carried: TraceContext | Record<string, string | string[] | undefined> | undefined): Context {
  return carried ? propagation.extract(ROOT_CONTEXT, carried) : ROOT_CONTEXT;
}

/**
 * Runs `work` in a new active span, child of `parent` (the active context by default). A rejection marks
 * the span as an error, with the error's type and message (never its data), and is passed on.
 */
export async function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>, parent: Context = context.active()): Promise<T> {
  return giTracer().startActiveSpan(name, options, parent, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span as failed by `error`. */
export function markFailed(span: Span, error: unknown): void {
  const type = error instanceof Error ? error.name : typeof error;
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 200) : undefined });
}
