import { SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { ClaimedInvocation, Outcome } from '@gi/domain';
import { inSpan, tracingEnabled } from '@gi/observability';

/**
 * The span of one attempt at an invocation: from the claim to the outcome recorded and announced, a
 * child of the job's consumer span. The connector's HTTP requests carry its trace context.
 */
export function inRunSpan<T>(invocation: ClaimedInvocation, work: () => Promise<T>): Promise<T> {
  if (!tracingEnabled()) return work();
  const attributes = {
    'gi.bot.id': invocation.botId,
    'gi.invocation.id': invocation.id,
    'gi.integration.id': invocation.integrationId,
    'gi.integration.version': invocation.integrationVersion,
    'gi.pool': invocation.pool,
    'gi.attempt': invocation.attempt,
  };
  return inSpan('connector run', { kind: SpanKind.INTERNAL, attributes }, work);
}

/** Records the run's outcome on its span: a failure is the span's error, with the problem code. */
export function noteOutcome(outcome: Outcome): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttribute('gi.outcome', outcome.status);
  if (outcome.status === 'Completed') return;
  span.setAttribute('gi.error.code', outcome.error.code);
  if (outcome.status === 'Failed') span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error.title });
}
