import { isSpanContextValid, trace } from '@opentelemetry/api';
import pino from 'pino';
import type { DestinationStream, Logger } from 'pino';

export type { Logger };

export interface LoggerOptions {
  /** Where lines go: stdout unless given (tests read them from a stream of their own). */
  destination?: DestinationStream;
}

/** Where credentials might appear in a logged object; each is replaced by `[redacted]`. */
const REDACTED_PATHS = [
  '*.authorization',
  '*.Authorization',
  'headers.authorization',
  'headers.cookie',
  '*.token',
  'token',
  'adminToken',
  'secret',
  '*.password',
  'password',
];

/**
 * The trace and span of the work a line is written in (`trace_id`, `span_id`, `trace_flags`, the names
 * of OpenTelemetry's log data model), so a line leads to its trace; nothing while tracing is off, when
 * no span is ever active.
 */
function traceFields(): object {
  // A new object each time: pino merges the line's own fields into it.
  const span = trace.getActiveSpan();
  if (!span) return {};
  const context = span.spanContext();
  if (!isSpanContextValid(context)) return {};
  return { trace_id: context.traceId, span_id: context.spanId, trace_flags: context.traceFlags.toString(16).padStart(2, '0') };
}

/**
 * JSON logs, one object a line. Credentials are redacted wherever they might appear in a logged object.
 * Fields every line of the process carries belong in this one place, as a pino `mixin`.
 */
export function createLogger(level: string, name: string, options: LoggerOptions = {}): Logger {
  const settings = { name, level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' }, mixin: traceFields };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}
